"""The audit writer's side of the database: one connection, each batch written in one
transaction inside one worker-thread hop. The queue and the batching are proxy.audit's.

The transaction never stays open across turns of the event loop: synchronous code on the loop
(the ask chain's grant write) waits for the write lock, and a writer that needed the loop to
finish its transaction would then hold that lock until the loop's write timed out."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.store.database import Params
from proxy.store.events import insert_rows

WRITER_CACHE_KIB = 8 * 1024  # the writer connection's page cache (see _open)


@dataclass(frozen=True, slots=True)
class Statement:
    """A parameterised statement a proxy/store class made; a list of rows runs as one
    executemany step."""

    sql: str
    params: Params


@dataclass(frozen=True, slots=True)
class EventRows:
    """Audit event rows in EVENT_FIELDS order, inserted several to a statement
    (proxy.store.events.insert_rows)."""

    rows: list[tuple[Any, ...]]


Step = Statement | EventRows  # of a batch, written in order in one transaction


async def open_writer(path: Path) -> sqlite3.Connection:
    """Open (and migrate) the writer's connection in a thread."""
    return await asyncio.to_thread(_open, path)


def _open(path: Path) -> sqlite3.Connection:
    from proxy.store.schema import connect

    db = connect(path)
    # Statement journals (which every events INSERT needs, for its triggers) in memory, not in
    # a temporary file: a page copied there was a pwrite() each (about 60 KB a row).
    db.execute("PRAGMA temp_store = MEMORY")
    # A page cache of 8 MB (SQLite's default is 2 MB): with 2 MB a batch's pages (the rows, the
    # 15 indexes of `events`, the search index's segments) did not fit, so pages were written to
    # the WAL before the commit and again at it, and read back. 6,000 rows of 4 KB calls with
    # their indexing: 198k -> 88k reads and 298k -> 232k writes (system calls); 10,000 rows of
    # 200 B calls: 38k -> 18k and 68k -> 57k. At most 8 MB more per proxy, only as it is used.
    db.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
    return db


async def write_batch(db: sqlite3.Connection, steps: list[Step]) -> None:
    """Every step in one transaction: all of them are written, or none."""
    await asyncio.to_thread(_write_steps, db, steps)


async def index_chunk(db: sqlite3.Connection) -> int:
    """Index the next chunk of audit rows for History search; how many still wait."""
    from proxy.store.fts_index import index_chunk as chunk

    return await asyncio.to_thread(chunk, db)


async def close_writer(db: sqlite3.Connection) -> None:
    await asyncio.to_thread(db.close)


def _write_steps(db: sqlite3.Connection, steps: list[Step]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in steps:
            if isinstance(step, EventRows):
                insert_rows(db, step.rows)
            elif isinstance(step.params, list):
                db.executemany(step.sql, step.params)
            else:
                db.execute(step.sql, step.params)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
