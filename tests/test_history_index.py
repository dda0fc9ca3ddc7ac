"""History search with the index filled off the write path (schema v4, proxy.store.fts_index):
a row is found the moment it is written, indexed or not, once, by the same rules."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app import history_query as hq
from proxy import audit
from proxy.audit import AuditEvent, AuditWriter
from proxy.store import fts_index, retention, schema
from tests.relay_pipes import query, wait_for
from tests.test_app_history import add_event


def body(i: int) -> str:
    return json.dumps({"to": f"user{i}@corp.example", "body": f"Grüße Nr. {i}, marker-{i:05d}"},
                      ensure_ascii=False)


def in_index(conn: sqlite3.Connection, text: str) -> list[int]:
    """Rowids the FTS index itself holds for a text (no scan involved)."""
    phrase = '"' + text.replace('"', '""') + '"'
    return [r[0] for r in conn.execute(
        "SELECT rowid FROM events_fts WHERE events_fts MATCH ? ORDER BY rowid", (phrase,))]


def search(conn: sqlite3.Connection, text: str, limit: int = hq.PAGE, **kw: Any) -> list[int]:
    """Every page of a search, as the History tab loads them, by id."""
    history = hq.History(conn)
    filt = hq.HistoryFilter(text=text, **kw)
    found: list[int] = []
    after = None
    while True:
        page = history.page(filt, after, limit=limit)
        found += [r.id for r in page]
        if len(page) < limit:
            return found
        after = (page[-1].ts, page[-1].id)


@pytest.fixture
def conn(db_file: Path) -> sqlite3.Connection:
    return schema.connect(db_file)


def fill(conn: sqlite3.Connection, n: int) -> list[int]:
    conn.execute("BEGIN")
    ids = [add_event(conn, 1000.0 + i, server=("gmail", "fs")[i % 2], rpc_id=str(i),
                     reason=f"reason {i}", payload=body(i)) for i in range(n)]
    conn.execute("COMMIT")
    return ids


def test_rows_not_indexed_yet_are_found_like_indexed_ones(conn: sqlite3.Connection) -> None:
    ids = fill(conn, 700)
    assert fts_index.index_chunk(conn) == 200  # 500 rows indexed, 200 wait
    upto = fts_index.indexed_upto(conn)
    assert ids[0] < upto < ids[-1]
    assert in_index(conn, "marker-00042") == [ids[42]]
    assert in_index(conn, "marker-00642") == []
    # Pages straddle the mark: newest first, every match once, nothing missing.
    assert search(conn, "corp.example", limit=64) == sorted(ids, reverse=True)
    assert search(conn, "marker-00642") == [ids[642]]
    assert search(conn, "marker-00042") == [ids[42]]
    # Case folded beyond ASCII on both sides of the mark, as the trigram index folds.
    assert search(conn, "GRÜSSE", all_frames=True) == []
    assert search(conn, "GRÜßE NR. 642,") == [ids[642]]
    assert search(conn, "grüße nr. 42,") == [ids[42]]
    # Other filters apply to the rows not indexed yet too.
    assert search(conn, "marker-0064", server="fs") == [ids[i] for i in (649, 647, 645, 643,
                                                                            641)]
    assert search(conn, "reason 699", all_frames=True) == [ids[699]]
    # A quote in the payload is stored JSON-escaped; the scan looks for both forms too.
    quoted = add_event(conn, 5000.0, payload=json.dumps({"q": 'say "hi" now'}))
    assert search(conn, 'say "hi"') == [quoted]
    fts_index.index_all(conn)
    assert search(conn, 'say "hi"') == [quoted]
    assert search(conn, "corp.example", limit=64) == sorted(ids, reverse=True)


def test_retention_of_rows_indexed_or_not_leaves_only_what_remains(
    conn: sqlite3.Connection, db_file: Path
) -> None:
    ids = fill(conn, 700)
    fts_index.index_chunk(conn)  # rows 0..499 indexed
    conn.execute("UPDATE events SET ts = 1 WHERE id IN (?, ?)", (ids[10], ids[600]))
    removed = retention.prune(db_file, 1, now=86400 + 500.0)
    assert removed["events"] == 2
    fts_index.index_all(conn)
    assert in_index(conn, "marker-00010") == [] and in_index(conn, "marker-00600") == []
    assert search(conn, "marker-00010") == [] and search(conn, "marker-00600") == []
    assert in_index(conn, "marker-00011") == [ids[11]]
    assert in_index(conn, "marker-00601") == [ids[601]]
    assert len(search(conn, "corp.example")) == 698


def v3_database(path: Path) -> sqlite3.Connection:
    """A database file as schema v3 left it (its insert trigger fed the index)."""
    old = sqlite3.connect(path, isolation_level=None)
    for step in schema.MIGRATIONS[:3]:
        for statement in schema._statements(step):
            old.execute(statement)
    old.execute("PRAGMA user_version = 3")
    return old


def test_a_v3_database_with_rows_upgrades_to_v4_and_stays_searchable(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    old = v3_database(path)
    old_ids = fill(old, 50)  # indexed by v3's insert trigger
    old.close()

    conn = schema.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    assert fts_index.indexed_upto(conn) == old_ids[-1]
    assert in_index(conn, "marker-00007") == [old_ids[7]]
    new = add_event(conn, 9000.0, payload=body(99999))
    assert in_index(conn, "marker-99999") == []  # no trigger any more: the writer indexes
    assert search(conn, "corp.example") == [new, *sorted(old_ids, reverse=True)]
    fts_index.index_all(conn)
    assert in_index(conn, "marker-99999") == [new]
    # Retention after the upgrade removes old rows and new ones from the index alike.
    conn.execute("DELETE FROM events WHERE id IN (?, ?)", (old_ids[7], new))
    assert in_index(conn, "marker-00007") == [] and in_index(conn, "marker-99999") == []
    assert len(search(conn, "corp.example")) == 49
    conn.execute("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')")


def test_a_read_only_look_at_a_v3_file_still_searches(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    old = v3_database(path)
    ids = fill(old, 5)
    old.close()
    ro = schema.connect(path, readonly=True)
    assert search(ro, "marker-00003") == [ids[3]]


def call_event(i: int) -> AuditEvent:
    return AuditEvent("c2s", "request", method="tools/call", rpc_id=str(i), tool="send_email",
                      verdict="allow", payload={"params": {"arguments": {"body": body(i)}}})


async def test_the_writer_indexes_when_idle_and_rows_are_found_before_that(
    db_file: Path
) -> None:
    writer = AuditWriter(db_file, "s1", "gmail", window=0.001, index_idle=0.05)
    await writer.start()
    for i in range(30):
        await writer.put_wait(call_event(i))
    conn = schema.connect(db_file)
    await wait_for(lambda: writer.written >= 30, what="30 rows written")
    ids = [r[0] for r in conn.execute("SELECT id FROM events WHERE kind = 'request' ORDER BY id")]
    assert search(conn, "marker-00017") == [ids[17]]  # durable and found, indexed or not
    top = ids[-1]
    await wait_for(lambda: fts_index.indexed_upto(conn) >= top, what="rows indexed when idle")
    assert in_index(conn, "marker-00017") == [ids[17]]
    assert search(conn, "marker-00017") == [ids[17]]
    await writer.close()


async def test_a_busy_writer_indexes_once_it_is_far_behind(
    db_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "INDEX_LAG", 40)
    writer = AuditWriter(db_file, "s1", "gmail", window=0.001, max_batch=10, index_idle=3600)
    await writer.start()
    for i in range(100):
        await writer.put_wait(call_event(i))
    await wait_for(lambda: writer.written >= 100, what="100 rows written")
    conn = schema.connect(db_file)
    assert fts_index.indexed_upto(conn) >= 40  # never idle for an hour, yet indexed
    await writer.close()


async def test_two_writers_indexing_one_database_index_every_row_once(db_file: Path) -> None:
    writers = [AuditWriter(db_file, f"s{n}", "gmail", window=0.001, max_batch=7,
                           index_idle=0.01) for n in (1, 2)]
    for w in writers:
        await w.start()
    for i in range(200):
        await writers[i % 2].put_wait(call_event(i))
    conn = schema.connect(db_file)
    await wait_for(lambda: sum(w.written for w in writers) >= 200, what="rows written")
    top = conn.execute("SELECT MAX(id) FROM events").fetchone()[0]
    await wait_for(lambda: fts_index.indexed_upto(conn) >= top, what="every row indexed")
    for w in writers:
        await w.close()
    rows = query(db_file, "SELECT id, rpc_id FROM events ORDER BY id")
    assert len(rows) == 200
    for row in rows:
        assert in_index(conn, f"marker-{int(row['rpc_id']):05d}") == [row["id"]]
    assert len(search(conn, "corp.example")) == 200
