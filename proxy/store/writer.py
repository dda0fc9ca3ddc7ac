"""The audit writer's side of the database: one connection, each batch written in one
transaction inside one worker-thread hop. The queue and the batching are proxy.audit's.

The transaction never stays open across turns of the event loop: synchronous code on the loop
(the ask chain's grant write) waits for the write lock, and a writer that needed the loop to
finish its transaction would then hold that lock until the loop's write timed out."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from proxy.store.events import INSERT_EVENT, insert_rows

# A batch step: a statement and its parameters, or a statement and a list of rows (executemany;
# event rows go in several to a statement, proxy.store.events.insert_rows).
Step = tuple[str, Any]


async def open_writer(path: Path) -> sqlite3.Connection:
    """Open (and migrate) the writer's connection in a thread."""
    return await asyncio.to_thread(_open, path)


def _open(path: Path) -> sqlite3.Connection:
    from proxy.store.schema import connect

    db = connect(path)
    # Statement journals (which every events INSERT needs, for its triggers) in memory, not in
    # a temporary file: a page copied there was a pwrite() each (about 60 KB a row).
    db.execute("PRAGMA temp_store = MEMORY")
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
        for sql, params in steps:
            if sql == INSERT_EVENT and isinstance(params, list):
                insert_rows(db, params)
            elif isinstance(params, list):
                db.executemany(sql, params)
            else:
                db.execute(sql, params)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
