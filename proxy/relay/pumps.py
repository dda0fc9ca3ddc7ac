"""The asyncio shell around the relay core: two pumps that feed it lines and carry out its actions.

Everything that decides lives in `proxy.relay.core`; this module only reads frames, writes
bytes, queues audit events, runs held calls and timers, and completes Gatewatch's own requests
to the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

from proxy.audit import FULL_PAYLOAD_LIMIT, AuditEvent, AuditWriter
from proxy.errors import GatewatchError
from proxy.gate import Gate
from proxy.relay.actions import (
    Action,
    Answered,
    HeldCall,
    Hold,
    Hooks,
    Record,
    Timer,
    ToClient,
    ToServer,
)
from proxy.relay.core import MAX_PARSE, RelayCore
from proxy.relay.framing import Line, read_frames
from proxy.relay.messages import RawId, raw_id
from proxy.session import Session
from proxy.stdio import ByteWriter

log = logging.getLogger(__name__)
_yield_cpu = getattr(os, "sched_yield", None)  # POSIX; Windows has none


def _may_wait(writer: Any) -> bool:
    """Could drain() wait or fail? Only with bytes still queued (the pipe is full) or a closing
    transport; a frame the pipe took whole needs no trip through drain()."""
    transport = getattr(writer, "transport", None)
    if transport is None:
        return True  # not a transport-backed writer: ask it
    return bool(transport.get_write_buffer_size()) or transport.is_closing()


class ClientRequestError(GatewatchError, RuntimeError):
    def __init__(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else str(error)
        super().__init__(message or "client answered with an error")
        self.error = error


class Relay:
    def __init__(
        self,
        session: Session,
        gate: Gate,
        audit: AuditWriter,
        client_in: asyncio.StreamReader,
        client_out: ByteWriter,
        upstream_in: asyncio.StreamWriter,
        upstream_out: asyncio.StreamReader,
        *,
        hooks: Hooks | None = None,
        max_parse: int = MAX_PARSE,
    ) -> None:
        self.hooks = hooks or Hooks()
        self.core = RelayCore(session, gate, self.hooks, max_parse=max_parse)
        self.session = session
        self.gate = gate
        self.audit = audit
        self.client_in = client_in
        self.client_out = client_out
        self.upstream_in = upstream_in
        self.upstream_out = upstream_out
        self.max_parse = max_parse
        self.held: dict[Any, asyncio.Task[None]] = {}  # tasks settling held calls
        self._answers: dict[str, asyncio.Future[Any]] = {}
        self._timers: set[asyncio.TimerHandle] = set()
        self._timer_tasks: set[asyncio.Task[None]] = set()
        self.client_gone = False
        self.upstream_gone = False

    # ---- carrying out actions -------------------------------------------------------------------

    async def run(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToServer):
                await self.to_server(action.data)
            elif isinstance(action, ToClient):
                await self.to_client(action.data)
            elif isinstance(action, Record):
                await self.record(action.event)
            elif isinstance(action, Hold):
                self._hold(action.held)
            elif isinstance(action, Answered):
                self._complete(action)
            elif isinstance(action, Timer):
                self._start_timer(action.delay, action.fire)

    async def to_client(self, data: bytes) -> None:
        if self.client_gone:
            return
        try:
            self.client_out.write(data)
            if _may_wait(self.client_out):
                await self.client_out.drain()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.client_gone = True

    async def to_server(self, data: bytes) -> None:
        if self.upstream_gone:
            return
        try:
            self.upstream_in.write(data)
            if _may_wait(self.upstream_in):
                await self.upstream_in.drain()
        except (BrokenPipeError, ConnectionResetError, OSError, RuntimeError):
            self.upstream_gone = True

    async def record(self, event: AuditEvent) -> None:
        if event.direction == "gw2c" and event.verdict in ("deny", "block"):
            self.hooks.notice(event)
        waiting = self.audit.put(event)
        if waiting is not None:
            await waiting

    def _start_timer(self, delay: float, fire: Callable[[], list[Action]]) -> None:
        loop = asyncio.get_running_loop()

        def due() -> None:
            self._timers.discard(handle)
            task = loop.create_task(self.run(fire()))
            self._timer_tasks.add(task)
            task.add_done_callback(self._timer_tasks.discard)

        handle = loop.call_later(delay, due)
        self._timers.add(handle)

    # ---- pumps ----------------------------------------------------------------------------------

    async def pump_client(self) -> None:
        """Client → upstream, until the client closes its end."""
        await self._pump("c2s", self.client_in, self.core.client_frame, self.core.client_oversize)

    async def pump_server(self) -> None:
        """Upstream → client, until the upstream closes its stdout."""
        await self._pump("s2c", self.upstream_out, self.core.server_frame,
                         self.core.server_oversize)

    async def _pump(
        self, direction: str, reader: asyncio.StreamReader, frame_in: Any, oversize: Any
    ) -> None:
        head = bytearray()
        seen = 0
        async for frame in read_frames(reader, self.max_parse):
            if isinstance(frame, Line):
                try:
                    actions = await frame_in(frame.data)
                except Exception as exc:
                    # A bug must not end the session or let the frame through: it is dropped.
                    log.exception("internal error on a frame (%s); dropped it", direction)
                    actions = [Record(AuditEvent(
                        direction, "internal_error", size=len(frame.data), verdict="deny",
                        contract="internal", reason=f"Gatewatch failed on this frame: {exc!r}",
                        payload=frame.data))]
                await self.run(actions)
                if self.core.has_later and not self.core.pending and _yield_cpu is not None:
                    # The last answer anyone waited for is written and its reader woken, which
                    # Linux queues on this core: let it run before the bookkeeping that follows
                    # the forward (taint), or it waits for all of it (a client with think time:
                    # p50 0.51 -> 0.31 ms at 4 KB without the detector). Not while requests are
                    # in flight: pipelined, a yield per answer cost a third of the throughput.
                    # The next frame still waits for the bookkeeping.
                    _yield_cpu()
                self.core.run_later()
                continue
            # An oversize line is never passed on: its head is kept for the answer and the audit.
            if frame.first:
                head, seen = bytearray(), 0
            if len(head) < FULL_PAYLOAD_LIMIT:
                head += frame.data[: FULL_PAYLOAD_LIMIT - len(head)]
            seen += len(frame.data)
            if frame.last:
                await self.run(oversize(bytes(head), seen))
                head = bytearray()

    # ---- held calls (the ask chain calls these) -------------------------------------------------

    def _hold(self, held: HeldCall) -> None:
        self.held[held.raw_id] = asyncio.create_task(self._settle(held))

    async def _settle(self, held: HeldCall) -> None:
        try:
            asker = self.gate.asker
            assert asker is not None
            await asker.settle(held)
        except Exception:
            log.exception("asking a human failed; the call is denied")
            await self.deny_call(held.raw_id, held.tool, "Gatewatch could not ask a human",
                                 decided_by="fallback", contract=held.verdict.contract)
        finally:
            self.held.pop(held.raw_id, None)
            self.core.settled(held)

    async def forward_held(self, held: HeldCall, data: bytes | None = None) -> None:
        await self.run(self.core.forward_held(held, data))

    async def deny_call(
        self,
        rpc_id: RawId | Any,
        tool: str,
        reason: str,
        *,
        decided_by: str,
        contract: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        rid = rpc_id if isinstance(rpc_id, bytes) else raw_id(rpc_id)
        await self.run(self.core.deny_call(rid, tool, reason, decided_by=decided_by,
                                           contract=contract, detail=detail))

    async def reply(self, rpc_id: RawId | Any, result: dict[str, Any], event: AuditEvent) -> None:
        rid = rpc_id if isinstance(rpc_id, bytes) else raw_id(rpc_id)
        await self.run(self.core.reply(rid, result, event))

    # ---- Gatewatch's own requests to the client (elicitation) -----------------------------------

    async def request_client(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send a request to the client with a "gw-" id and wait for its answer."""
        rpc_id, actions = self.core.client_request(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._answers[rpc_id] = future
        try:
            await self.run(actions)
            return await asyncio.wait_for(future, timeout)
        finally:
            self._answers.pop(rpc_id, None)
            self.core.forget_client_request(rpc_id)

    def _complete(self, answer: Answered) -> None:
        future = self._answers.get(answer.rpc_id)
        if future is None or future.done():
            return
        if answer.error is not None:
            future.set_exception(ClientRequestError(answer.error))
        else:
            future.set_result(answer.result)

    def client_closed(self) -> None:
        for future in self._answers.values():
            if not future.done():
                future.set_exception(ClientRequestError({"message": "client disconnected"}))
        self.core.client_gone()
        for handle in self._timers:
            handle.cancel()
