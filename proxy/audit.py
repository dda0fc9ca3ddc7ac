"""The audit log writer: a bounded queue feeding batched inserts, off the relay's hot path.

The relay hands over events with `put()` (never blocks while the queue has room; when it is
full the caller awaits, so nothing is dropped). A background task waits for the first item,
gathers whatever else arrives within `window` seconds, and writes the batch in one transaction.
A crash loses at most the batch being gathered. Other statements (sessions, taint, pins, trust)
go through the same queue with `execute()` and are written in the same transaction as the
events queued with them: a statement on `events` (an ask step's row) in its place among them,
the others in their own order after the event rows around them (see `_rows`).

The History search index is filled here too, off the write path (proxy.store.fts_index), one
chunk per transaction: once the queue has stayed empty for `index_idle` seconds, and, when the
writer is never idle that long, after a batch that leaves `INDEX_LAG` rows or more unindexed
(until fewer are left). A batch is committed before its rows are indexed: a row is durable
first and searchable through the index shortly after (proxy.store.history scans the rest).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy.redact import CUT_MARGIN, redact_json, redact_text
from proxy.store.database import Params, Write
from proxy.store.fts_index import INDEX_LAG
from proxy.store.sessions import SessionRecorder
from proxy.store.writer import (
    EventRows,
    Statement,
    Step,
    close_writer,
    index_chunk,
    open_writer,
    write_batch,
)

log = logging.getLogger(__name__)
PAYLOAD_LIMIT = 16 * 1024
FULL_PAYLOAD_LIMIT = 4 * 1024 * 1024  # blocked results keep their original for forensics


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


_STOP = object()
_EVENTS = re.compile(r"\bevents\b", re.IGNORECASE)


def _merge_runs(statements: list[Statement]) -> list[Statement]:
    """A run of many-row statements of the same SQL as one executemany (a call's taint rows
    were a statement each); everything else as it is, in order."""
    out: list[Statement] = []
    run: list[Any] | None = None  # the params of out[-1], when made here
    for statement in statements:
        last = out[-1] if out else None
        if (last is not None and last.sql == statement.sql and isinstance(last.params, list)
                and isinstance(statement.params, list)):
            if run is None:
                run = list(last.params)
                out[-1] = Statement(last.sql, run)
            run.extend(statement.params)
        else:
            out.append(statement)
            run = None
    return out


def _names_events(sql: str) -> bool:
    """Does a statement touch the `events` table (an ask step's row, a read of it)? Any
    mention counts, so a statement is only moved when it surely does not."""
    return _EVENTS.search(sql) is not None


def payload_text(payload: Any, limit: int) -> tuple[str | None, int]:
    """Redacted, bounded text of a payload (a JSON value, or the raw bytes of a frame that did
    not parse), and whether it was cut. One redaction pass over the text as stored."""
    if payload is None:
        return None, 0
    if isinstance(payload, (bytes, bytearray, memoryview)):
        text = redact_text(bytes(payload[: limit + CUT_MARGIN]).decode("utf-8", "replace"))
        if len(text) > limit or len(payload) > limit + CUT_MARGIN:
            return text[:limit], 1
        return text, 0
    text, cut = redact_json(payload, limit)
    return text, int(cut)


DETAIL_LIMIT = 16 * 1024


@dataclass(frozen=True, slots=True)
class RowText:
    """What an event stores as text, every part redacted: the audit API's one redaction point,
    so any row (a raw frame, a reason quoting a destination) is covered without its caller
    doing anything."""

    payload: str | None
    truncated: int
    detail: str | None
    reason: str | None


def row_text(event: AuditEvent) -> RowText:
    payload, cut = payload_text(event.payload, event.payload_limit)
    detail = redact_json(event.detail, DETAIL_LIMIT)[0] if event.detail else None
    reason = redact_text(event.reason) if event.reason else event.reason
    return RowText(payload, cut, detail, reason)


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
        index_idle: float = 0.25,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.server = server
        self.window = window
        self.max_batch = max_batch
        self.maxsize = maxsize
        self.index_idle = index_idle
        # Unbounded underneath: the bound applies to events (their producers wait for room);
        # statements from synchronous code (engine, ask chain) are never refused or dropped.
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._room = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._db: Any = None
        self._gathering: asyncio.Future[None] | None = None  # set while a batch is gathered
        self._closing = False
        self.high_water = 0  # largest queue length seen: evidence that it never fills
        self.waited = 0  # times a producer had to wait for room
        self.written = 0
        self.failed = 0
        self._unindexed = 1  # rows this writer wrote since it last indexed (others' count too)
        self.sessions = SessionRecorder(self.execute)  # this session's row, in order

    async def start(self) -> None:
        self._db = await open_writer(self.path)
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
        if self._gathering is not None and (size >= self.max_batch - 1 or self._closing):
            self._batch_ready()

    async def put_wait(self, event: AuditEvent) -> None:
        pending = self.put(event)
        if pending is not None:
            await pending

    def execute(self, sql: str, params: Params = ()) -> None:
        """Queue any other parameterised statement (made by a proxy/store class), in order
        with the events. Never blocks."""
        self._enqueue(Statement(sql, params))

    def writer(self, loop: asyncio.AbstractEventLoop) -> Write:
        """`execute` for the store classes, from the event loop and from worker threads alike
        (the engine writes from the loop; while it is loading, from a worker thread)."""

        def write(sql: str, params: Params) -> None:
            if threading.current_thread() is threading.main_thread():
                self._enqueue(Statement(sql, params))
            else:
                loop.call_soon_threadsafe(self._enqueue, Statement(sql, params))

        return write

    async def close(self) -> None:
        if self._task is not None:
            self._closing = True  # no more gathering: what is queued is written now
            self._enqueue(_STOP)
            await self._task
            self._task = None
        if self._db is not None:
            await close_writer(self._db)
            self._db = None

    async def _next(self) -> Any:
        """The next queued item; while none comes and rows wait for the index, index them."""
        while self._unindexed and self._queue.empty():
            try:
                return await asyncio.wait_for(self._queue.get(), self.index_idle)
            except TimeoutError:
                await self._index()
        return await self._queue.get()

    async def _index(self) -> bool:
        """One chunk of rows into the search index, in its own transaction (so other proxies'
        writers take turns); False if it failed."""
        try:
            self._unindexed = await index_chunk(self._db)
        except Exception as exc:  # locked beyond busy_timeout, disk full: try again later
            log.warning("indexing audit rows for search failed (%s)", exc)
            return False
        return True

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            item = await self._next()
            if item is _STOP:
                return
            batch = [item]
            if self.window > 0 and not self._closing and self._queue.qsize() < self.max_batch - 1:
                # Gather for one window, woken early when a full batch is waiting (see
                # _enqueue): one timer per batch, no polling.
                self._gathering = loop.create_future()
                timer = loop.call_later(self.window, self._batch_ready)
                await self._gathering
                timer.cancel()
                self._gathering = None
            stop = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            self._room.set()
            await self._flush(batch)
            if stop:
                return
            while self._unindexed >= INDEX_LAG:  # busy for long: keep the unindexed tail short
                if not await self._index():
                    break

    def _batch_ready(self) -> None:
        if self._gathering is not None and not self._gathering.done():
            self._gathering.set_result(None)

    def _rows(self, batch: list[Any]) -> list[Step]:
        """Turn a batch into steps: the events between two statements on `events` share one
        step, and the other statements queued among them run after it, in their order (a run
        of many-row statements of one SQL, such as consecutive calls' taint rows, as one).

        An echo call queues its request, its result and its taint rows: kept in that order,
        each call's two rows were an INSERT of their own, and every INSERT on `events` copies
        the pages it changes (the table and each index) into a statement journal. Moving a
        statement past event rows changes nothing the batch leaves: it is one transaction,
        no other table has a trigger, and `events`' triggers read only `events`."""
        steps: list[Step] = []
        rows: list[tuple[Any, ...]] = []
        others: list[Statement] = []
        for item in batch:
            if isinstance(item, Statement):
                if not _names_events(item.sql):
                    others.append(item)
                    continue
                if rows:
                    steps.append(EventRows(rows))
                    rows = []
                steps += _merge_runs(others)
                others = []
                steps.append(item)
                continue
            text = row_text(item)
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
                    text.reason,
                    item.decided_by,
                    text.detail,
                    item.latency_ms,
                    item.trace_id,
                    text.payload,
                    text.truncated,
                )
            )
        if rows:
            steps.append(EventRows(rows))
        steps += _merge_runs(others)
        return steps

    async def _flush(self, batch: list[Any]) -> None:
        steps = await asyncio.to_thread(self._rows, batch)
        for attempt in range(5):
            try:
                await write_batch(self._db, steps)
                self.written += len(batch)
                self._unindexed += len(batch)
                return
            except Exception as exc:  # locked beyond busy_timeout, disk full, ...
                log.warning("audit write failed (%s); retrying", exc)
                await asyncio.sleep(0.2 * (attempt + 1))
        self.failed += len(batch)
        log.error("gave up writing %d audit rows", len(batch))
