"""The audit writer's side of the database: one aiosqlite connection, batches in one
transaction. The queue and the batching are proxy.audit's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

# A batch step: a statement and its parameters, or a statement and a list of rows (executemany).
Step = tuple[str, Any]


async def open_writer(path: Path) -> Any:
    """Migrate with a plain connection in a thread, then open an aiosqlite one for writing."""
    import aiosqlite

    from proxy.store.schema import BUSY_TIMEOUT_MS, connect

    await asyncio.to_thread(lambda: connect(path).close())
    db = await aiosqlite.connect(str(path), isolation_level=None)
    await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await db.execute("PRAGMA synchronous = NORMAL")
    return db


async def write_batch(db: Any, steps: list[Step]) -> None:
    """Every step in one transaction: all of them are written, or none."""
    await db.execute("BEGIN IMMEDIATE")
    try:
        for sql, params in steps:
            if isinstance(params, list):
                await db.executemany(sql, params)
            else:
                await db.execute(sql, params)
        await db.execute("COMMIT")
    except BaseException:
        await db.execute("ROLLBACK")
        raise
