"""The audit log writer: a bounded queue feeding batched inserts, off the relay's hot path.

The relay hands over events with `put()` (never blocks while the queue has room; when it is
full the caller awaits, so nothing is dropped). A background task waits for the first item,
gathers whatever else arrives within `window` seconds, and writes the batch in one transaction.
A crash loses at most the batch being gathered. Other statements (sessions, taint, pins, trust)
go through the same queue with `execute()` so their order with events is kept.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy import jsonrpc
from proxy.redact import CUT_MARGIN, redact, redact_text

PAYLOAD_LIMIT = 16 * 1024
FULL_PAYLOAD_LIMIT = 4 * 1024 * 1024  # blocked results keep their original for forensics

INSERT_EVENT = (
    "INSERT INTO events (ts, session_id, server, direction, kind, method, rpc_id, tool, size, "
    "verdict, contract, reason, decided_by, detail, latency_ms, trace_id, payload, "
    "payload_truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(slots=True)
class AuditEvent:
    direction: str
    kind: str
    method: str | None = None
    rpc_id: str | None = None
    tool: str | None = None
    size: int = 0
    verdict: str | None = None
    contract: str | None = None
    reason: str | None = None
    decided_by: str | None = None
    detail: dict[str, Any] | None = None
    latency_ms: float | None = None
    trace_id: str | None = None
    payload: Any = None  # parsed JSON value, or raw bytes when it did not parse
    payload_limit: int = PAYLOAD_LIMIT
    ts: float = field(default_factory=time.time)


@dataclass(slots=True)
class _Statement:
    sql: str
    params: tuple[Any, ...]


_STOP = object()


def payload_text(payload: Any, limit: int) -> tuple[str | None, int]:
    """Redacted, bounded text of a payload, and whether it was cut."""
    if payload is None:
        return None, 0
    if isinstance(payload, (bytes, bytearray)):
        text = redact_text(bytes(payload[: limit + CUT_MARGIN]).decode("utf-8", "replace"))
    else:
        text = jsonrpc.dumps(redact(payload, max_string=limit)).decode()
    if len(text) > limit:
        return text[:limit], 1
    return text, 0


class AuditWriter:
    def __init__(
        self,
        path: Path,
        session_id: str,
        server: str,
        *,
        window: float = 0.05,
        max_batch: int = 1000,
        maxsize: int = 10_000,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.server = server
        self.window = window
        self.max_batch = max_batch
        self.maxsize = maxsize
        # Unbounded underneath: the bound applies to events (their producers wait for room);
        # statements from synchronous code (engine, ask chain) are never refused or dropped.
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._room = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._db: Any = None
        self.high_water = 0  # largest queue length seen: evidence that it never fills
        self.waited = 0  # times a producer had to wait for room
        self.written = 0
        self.failed = 0

    async def start(self) -> None:
        import aiosqlite

        from proxy.store.schema import connect

        # Migrate with a plain connection in a thread, then keep an aiosqlite one for writing.
        await asyncio.to_thread(lambda: connect(self.path).close())
        self._db = await aiosqlite.connect(str(self.path), isolation_level=None)
        from proxy.store.schema import BUSY_TIMEOUT_MS

        await self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await self._db.execute("PRAGMA synchronous = NORMAL")
        self._task = asyncio.create_task(self._run(), name="audit-writer")

    def put(self, event: AuditEvent) -> Awaitable[None] | None:
        """Queue an event. Returns None, or an awaitable when the queue is full (await it)."""
        if self._queue.qsize() >= self.maxsize:
            self.waited += 1
            return self._put_when_room(event)
        self._enqueue(event)
        return None

    async def _put_when_room(self, event: AuditEvent) -> None:
        while self._queue.qsize() >= self.maxsize:
            self._room.clear()
            await self._room.wait()
        self._enqueue(event)

    def _enqueue(self, item: Any) -> None:
        self._queue.put_nowait(item)
        size = self._queue.qsize()
        if size > self.high_water:
            self.high_water = size

    async def put_wait(self, event: AuditEvent) -> None:
        pending = self.put(event)
        if pending is not None:
            await pending

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """Queue any other parameterised statement, in order with the events. Never blocks."""
        self._enqueue(_Statement(sql, params))

    async def close(self) -> None:
        if self._task is not None:
            self._queue.put_nowait(_STOP)
            await self._task
            self._task = None
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            item = await self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            deadline = loop.time() + self.window
            stop = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        break
                    await asyncio.sleep(min(remaining, 0.01))
                    continue
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            self._room.set()
            await self._flush(batch)
            if stop:
                return

    def _rows(self, batch: list[Any]) -> list[tuple[str, Any]]:
        """Turn a batch into (sql, params-or-rows) steps; consecutive events share one step."""
        steps: list[tuple[str, Any]] = []
        rows: list[tuple[Any, ...]] = []
        for item in batch:
            if isinstance(item, _Statement):
                if rows:
                    steps.append((INSERT_EVENT, rows))
                    rows = []
                steps.append((item.sql, item.params))
                continue
            text, cut = payload_text(item.payload, item.payload_limit)
            rows.append(
                (
                    item.ts,
                    self.session_id,
                    self.server,
                    item.direction,
                    item.kind,
                    item.method,
                    item.rpc_id,
                    item.tool,
                    item.size,
                    item.verdict,
                    item.contract,
                    item.reason,
                    item.decided_by,
                    jsonrpc.dumps(redact(item.detail)).decode() if item.detail else None,
                    item.latency_ms,
                    item.trace_id,
                    text,
                    cut,
                )
            )
        if rows:
            steps.append((INSERT_EVENT, rows))
        return steps

    async def _flush(self, batch: list[Any]) -> None:
        steps = await asyncio.to_thread(self._rows, batch)
        for attempt in range(5):
            try:
                await self._db.execute("BEGIN IMMEDIATE")
                try:
                    for sql, params in steps:
                        if isinstance(params, list):
                            await self._db.executemany(sql, params)
                        else:
                            await self._db.execute(sql, params)
                    await self._db.execute("COMMIT")
                except BaseException:
                    await self._db.execute("ROLLBACK")
                    raise
                self.written += len(batch)
                return
            except Exception as exc:  # locked beyond busy_timeout, disk full, ...
                print(f"gatewatch: audit write failed ({exc}); retrying", file=sys.stderr)
                await asyncio.sleep(0.2 * (attempt + 1))
        self.failed += len(batch)
        print(f"gatewatch: gave up writing {len(batch)} audit rows", file=sys.stderr)
