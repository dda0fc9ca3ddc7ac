"""The History search index (events_fts, trigram FTS5), filled off the audit write path.

Since schema v4 an insert into `events` no longer feeds the index: tokenising a row's text into
trigrams cost 3 to 25 times the insert itself. A row is durable when its batch commits; the
audit writer indexes rows in id order when it is idle (or when it has fallen `INDEX_LAG` rows
behind), in short transactions, and `fts_progress.indexed_upto` says how far it got. Every row
above that mark is matched by a scan (proxy.store.history), so a search finds a row whether it
is indexed yet or not.

Rowids only grow (AUTOINCREMENT) and SQLite has one writer at a time, so "every row with
id <= indexed_upto is in the index" holds with several proxies indexing one file.
"""

from __future__ import annotations

import sqlite3

# One chunk: at most this many rows, and about this much payload text (the index costs about
# 0.1 µs a character, so a chunk holds the write lock for roughly 10 to 20 ms).
CHUNK_ROWS = 500
CHUNK_CHARS = 128 * 1024
# A writer this many rows behind indexes even when it is busy, so the scan of unindexed rows
# a search does stays short (about 20 ms for 1,000 rows of 16 KB payloads).
INDEX_LAG = 1000

_CHUNK_END = (
    "SELECT id, COALESCE(length(payload), 0) + COALESCE(length(reason), 0) FROM events "
    "WHERE id > ? ORDER BY id LIMIT ?"
)
_INDEX = (
    "INSERT INTO events_fts (rowid, server, tool, method, reason, payload, trace_id) "
    "SELECT id, server, tool, method, reason, payload, trace_id FROM events "
    "WHERE id > ? AND id <= ?"
)


def indexed_upto(db: sqlite3.Connection) -> int:
    """Every row with an id up to this one is in the index."""
    try:
        row = db.execute("SELECT indexed_upto FROM fts_progress").fetchone()
    except sqlite3.OperationalError:  # a read-only look at a v3 file: its trigger indexed all
        return int(db.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])
    return int(row[0]) if row else 0


def pending(db: sqlite3.Connection) -> int:
    """How many rows wait for the index (an upper bound: ids deleted meanwhile count too)."""
    top = db.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]
    return max(0, int(top) - indexed_upto(db))


def index_chunk(db: sqlite3.Connection) -> int:
    """Index the next chunk of rows in one transaction; how many rows still wait after it."""
    db.execute("BEGIN IMMEDIATE")
    try:
        start = indexed_upto(db)  # read under the write lock: another proxy may have moved it
        end, chars = start, 0
        for row_id, length in db.execute(_CHUNK_END, (start, CHUNK_ROWS)):
            if end > start and chars + length > CHUNK_CHARS:
                break
            end, chars = int(row_id), chars + int(length)
        if end > start:
            db.execute(_INDEX, (start, end))
            db.execute("UPDATE fts_progress SET indexed_upto = ?", (end,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return pending(db)


def index_all(db: sqlite3.Connection) -> None:
    """Index every waiting row (tests, benchmarks, maintenance)."""
    while index_chunk(db):
        pass
