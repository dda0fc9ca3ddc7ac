"""The relay: two pumps moving newline-delimited JSON-RPC between the client and the upstream.

Frames are forwarded as the original bytes. Each frame is parsed once (to audit it and to find
the few methods Gatewatch intercepts) and only rewritten when a decision says so: a denied call
is answered by Gatewatch and never forwarded, a blocked result is replaced. Everything else —
unknown methods, notifications, ids, `_meta`, progress tokens — passes byte for byte.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from proxy import jsonrpc
from proxy.audit import FULL_PAYLOAD_LIMIT, PAYLOAD_LIMIT, AuditEvent, AuditWriter
from proxy.framing import Line, read_frames
from proxy.gate import BLOCK_PREFIX, Gate, ResultCheck, Verdict
from proxy.jsonrpc import GW_ID_PREFIX, id_key, id_text, kind_of
from proxy.session import Session
from proxy.stdio import ByteWriter

UNPARSED = object()  # what _parse returns for a frame it forwarded without parsing
MAX_PARSE = 64 * 1024 * 1024  # frames above this are forwarded untouched, audited as oversize
INSPECTED_METHODS = ("tools/call", "resources/read", "prompts/get")
# Results that need the engine or detector loaded; every other answer passes straight away.
GATED_RESULTS = frozenset((*INSPECTED_METHODS, "tools/list"))
# Maps a Gatewatch-held call to the coroutine that settles it (set by the ask chain's wiring).
AskHandler = Callable[["HeldCall"], Awaitable[None]]


@dataclass(slots=True)
class Pending:
    method: str
    tool: str | None
    t0: float
    arguments: dict[str, Any] | None = None  # of a tools/call, for the engine's taint step


@dataclass(slots=True)
class HeldCall:
    """A tools/call Gatewatch is holding while a human is asked."""

    msg: dict[str, Any]
    data: bytes
    tool: str
    arguments: dict[str, Any]
    verdict: Verdict
    cancelled: asyncio.Event


def new_trace_id() -> str:
    return secrets.token_hex(6)


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
        max_parse: int = MAX_PARSE,
    ) -> None:
        self.session = session
        self.gate = gate
        self.audit = audit
        self.client_in = client_in
        self.client_out = client_out
        self.upstream_in = upstream_in
        self.upstream_out = upstream_out
        self.max_parse = max_parse
        self.pending: dict[Any, Pending] = {}
        self.held: dict[Any, asyncio.Task[None]] = {}
        self.held_calls: dict[Any, HeldCall] = {}
        self.own_requests: dict[str, asyncio.Future[Any]] = {}
        self._next_own_id = 0
        self.client_gone = False
        self.upstream_gone = False
        self.on_session_change: Callable[[], None] | None = None
        # Told of every denied call and blocked result (the app turns them into notifications).
        self.on_notice: Callable[[AuditEvent], None] | None = None
        self.ask_handler: AskHandler | None = None

    # ---- writing -------------------------------------------------------------------------

    async def to_client(self, data: bytes) -> None:
        if self.client_gone:
            return
        try:
            self.client_out.write(data)
            await self.client_out.drain()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.client_gone = True

    async def to_server(self, data: bytes) -> None:
        if self.upstream_gone:
            return
        try:
            self.upstream_in.write(data)
            await self.upstream_in.drain()
        except (BrokenPipeError, ConnectionResetError, OSError, RuntimeError):
            self.upstream_gone = True

    async def record(self, event: AuditEvent) -> None:
        if event.direction == "gw2c" and event.verdict in ("deny", "block") and self.on_notice:
            self.on_notice(event)
        waiting = self.audit.put(event)
        if waiting is not None:
            await waiting

    # ---- pumps ---------------------------------------------------------------------------

    async def pump_client(self) -> None:
        """Client → upstream, until the client closes its end."""
        await self._pump(self.client_in, "c2s", self._from_client, self.to_server)

    async def pump_server(self) -> None:
        """Upstream → client, until the upstream closes its stdout."""
        await self._pump(self.upstream_out, "s2c", self._from_server, self.to_client)

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        direction: str,
        handle: Callable[[Line], Awaitable[None]],
        send: Callable[[bytes], Awaitable[None]],
    ) -> None:
        head = b""
        seen = 0
        async for frame in read_frames(reader, self.max_parse):
            if isinstance(frame, Line):
                await handle(frame)
                continue
            # An oversize line: forwarded piece by piece, untouched, audited once at its end.
            if frame.first:
                head, seen = frame.data[:PAYLOAD_LIMIT], 0
            seen += len(frame.data)
            await send(frame.data)
            if frame.last:
                await self.record(AuditEvent(direction, "oversize", size=seen, payload=head))

    # ---- client → upstream ---------------------------------------------------------------

    async def _parse(
        self, data: bytes, direction: str, send: Callable[[bytes], Awaitable[None]]
    ) -> Any:
        """The frame's JSON value; or, for an oversize or non-JSON frame, forward it untouched,
        audit it, and return UNPARSED."""
        size = len(data)
        if size > self.max_parse:
            await self.record(
                AuditEvent(direction, "oversize", size=size, payload=data[:PAYLOAD_LIMIT])
            )
        else:
            try:
                return jsonrpc.loads(data)
            except ValueError:
                if data.strip():
                    await self.record(AuditEvent(direction, "parse_error", size=size, payload=data))
        await send(data)
        return UNPARSED

    async def _from_client(self, line: Line) -> None:
        data = line.data
        msg = await self._parse(data, "c2s", self.to_server)
        if msg is UNPARSED:
            return
        if isinstance(msg, list):
            await self._client_batch(msg, data)
        elif await self._client_message(msg, data, len(data)):
            await self.to_server(data)

    async def _client_message(self, msg: Any, data: bytes, size: int) -> bool:
        """Audit and route one client message; True means forward the original bytes."""
        kind = kind_of(msg)
        if kind == "invalid":
            await self.record(AuditEvent("c2s", "invalid", size=size, payload=msg))
            return True
        rpc_id = msg.get("id")
        method = msg.get("method")
        params = msg.get("params")
        params = params if isinstance(params, dict) else {}
        event = AuditEvent(
            "c2s", kind, method=method, rpc_id=id_text(rpc_id), size=size, payload=msg
        )
        if kind == "request":
            self._observe_client(method, params)
            if method == "tools/call":
                return await self._call(msg, data, params, event)
            key = id_key(rpc_id)
            if key is not None:
                self.pending[key] = Pending(method, None, time.perf_counter())
        elif kind == "notification":
            if method == "notifications/cancelled":
                self._cancel_held(params.get("requestId"))
        elif isinstance(rpc_id, str) and rpc_id.startswith(GW_ID_PREFIX):
            event.direction = "c2gw"
            await self.record(event)
            self._own_response(rpc_id, msg)
            return False
        await self.record(event)
        return True

    def _observe_client(self, method: str, params: dict[str, Any]) -> None:
        changed = False
        if method == "initialize":
            self.session.saw_initialize(params)
            changed = True
        else:
            meta = params.get("_meta")
            if isinstance(meta, dict):
                version = meta.get(jsonrpc.META_PROTOCOL_VERSION)
                if isinstance(version, str):
                    changed = self.session.saw_request_meta(meta, version)
        if changed and self.on_session_change is not None:
            self.on_session_change()

    async def _call(
        self, msg: dict[str, Any], data: bytes, params: dict[str, Any], event: AuditEvent
    ) -> bool:
        await self.gate.wait_ready()
        tool = params.get("name")
        tool = tool if isinstance(tool, str) else ""
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        event.tool = tool
        self.session.calls += 1
        verdict = self.gate.decide(tool, arguments)
        self._stamp(event, verdict, "rules")
        await self.record(event)
        rpc_id = msg.get("id")
        if verdict.verdict == "allow":
            self._track_call(rpc_id, tool, arguments)
            if "requestState" in params:
                from proxy.ask import AskChain, without_retry_fields

                if AskChain.is_retry(params):
                    # A 2026-07-28 retry the rules now allow: Gatewatch's fields stay here.
                    stripped = {**msg, "params": without_retry_fields(params)}
                    await self.to_server(jsonrpc.dumps(stripped) + b"\n")
                    return False
            return True
        if verdict.verdict == "ask":
            held = HeldCall(msg, data, tool, arguments, verdict, asyncio.Event())
            key = id_key(rpc_id)
            if self.ask_handler is not None and key is not None:
                self.held_calls[key] = held
                self.held[key] = asyncio.create_task(self._settle(key, held))
                return False
            await self.deny_call(
                rpc_id,
                tool,
                f"{verdict.reason} (no way to ask a human)",
                decided_by="fallback",
                contract=verdict.contract,
            )
            return False
        await self.deny_call(
            rpc_id, tool, verdict.reason, decided_by="rules", contract=verdict.contract
        )
        return False

    def _stamp(self, event: AuditEvent, verdict: Verdict, decided_by: str) -> None:
        event.verdict = verdict.verdict
        event.contract = verdict.contract
        event.reason = verdict.reason
        event.decided_by = decided_by
        event.detail = verdict.audit_detail()
        self.session.last_verdict = verdict.verdict

    def _track_call(self, rpc_id: Any, tool: str, arguments: dict[str, Any]) -> None:
        key = id_key(rpc_id)
        if key is not None:
            self.pending[key] = Pending("tools/call", tool, time.perf_counter(), arguments)

    async def _settle(self, key: Any, held: HeldCall) -> None:
        try:
            assert self.ask_handler is not None
            await self.ask_handler(held)
        except Exception:
            import traceback

            traceback.print_exc(file=sys.stderr)
            await self.deny_call(
                held.msg.get("id"),
                held.tool,
                "Gatewatch could not ask a human",
                decided_by="fallback",
                contract=held.verdict.contract,
            )
        finally:
            self.held.pop(key, None)
            self.held_calls.pop(key, None)

    async def forward_held(self, held: HeldCall, data: bytes | None = None) -> None:
        """An ask settled as allow: send the call upstream (the original bytes by default)."""
        self._track_call(held.msg.get("id"), held.tool, held.arguments)
        await self.to_server(held.data if data is None else data)

    async def deny_call(
        self,
        rpc_id: Any,
        tool: str,
        reason: str,
        *,
        decided_by: str,
        contract: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Answer a tools/call with an isError result; the upstream never sees it."""
        self.session.denied += 1
        self.session.last_verdict = "deny"
        text = f"{BLOCK_PREFIX} {reason}"
        result = jsonrpc.tool_error_result(text, era=self.session.era)
        out = jsonrpc.result_response(rpc_id, result)
        await self.record(
            AuditEvent(
                "gw2c",
                "response",
                method="tools/call",
                rpc_id=id_text(rpc_id),
                tool=tool,
                size=len(out),
                verdict="deny",
                contract=contract,
                reason=reason,
                decided_by=decided_by,
                detail=detail,
                payload=result,
            )
        )
        await self.to_client(out)

    async def reply(self, rpc_id: Any, result: dict[str, Any], event: AuditEvent) -> None:
        """Send a result Gatewatch made (e.g. input_required) in answer to a client request."""
        out = jsonrpc.result_response(rpc_id, result)
        event.size = len(out)
        event.payload = result
        await self.record(event)
        await self.to_client(out)

    def _cancel_held(self, request_id: Any) -> None:
        held = self.held_calls.get(id_key(request_id))
        if held is not None:
            held.cancelled.set()

    async def _client_batch(self, batch: list[Any], data: bytes) -> None:
        """Batches (2025-03-26) are audited per member; a denied member is answered by us."""
        forward: list[Any] = []
        answers: list[Any] = []
        await self.gate.wait_ready()
        for member in batch:
            size = len(jsonrpc.dumps(member))
            if kind_of(member) == "request" and member.get("method") == "tools/call":
                params = member.get("params")
                params = params if isinstance(params, dict) else {}
                name = params.get("name")
                tool: str = name if isinstance(name, str) else ""
                raw_args = params.get("arguments")
                args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
                verdict = self.gate.decide(tool, args)
                if verdict.verdict == "ask":
                    verdict = Verdict(
                        "deny",
                        verdict.contract,
                        f"{verdict.reason} (cannot ask inside a JSON-RPC batch)",
                    )
                event = AuditEvent(
                    "c2s",
                    "request",
                    method="tools/call",
                    rpc_id=id_text(member.get("id")),
                    tool=tool,
                    size=size,
                    payload=member,
                    detail={"batch": len(batch)},
                )
                self._stamp(event, verdict, "rules")
                await self.record(event)
                if verdict.verdict == "allow":
                    self._track_call(member.get("id"), tool, args)
                    forward.append(member)
                else:
                    self.session.denied += 1
                    answers.append(
                        {
                            "jsonrpc": "2.0",
                            "id": member.get("id"),
                            "result": jsonrpc.tool_error_result(
                                f"{BLOCK_PREFIX} {verdict.reason}", era=self.session.era
                            ),
                        }
                    )
                continue
            if await self._client_message(member, b"", size):
                forward.append(member)
        if len(forward) == len(batch):
            await self.to_server(data)
        elif forward:
            await self.to_server(jsonrpc.dumps(forward) + b"\n")
        if answers:
            await self.to_client(jsonrpc.dumps(answers) + b"\n")

    # ---- requests Gatewatch itself sends to the client (elicitation) ---------------------

    async def request_client(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send a request to the client with a "gw-" id and wait for its answer."""
        self._next_own_id += 1
        rpc_id = f"{GW_ID_PREFIX}{self._next_own_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.own_requests[rpc_id] = future
        msg = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        out = jsonrpc.dumps(msg) + b"\n"
        await self.record(
            AuditEvent("gw2c", "request", method=method, rpc_id=rpc_id, size=len(out), payload=msg)
        )
        await self.to_client(out)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self.own_requests.pop(rpc_id, None)

    def _own_response(self, rpc_id: str, msg: dict[str, Any]) -> None:
        future = self.own_requests.get(rpc_id)
        if future is None or future.done():
            return
        if "error" in msg:
            future.set_exception(ClientRequestError(msg["error"]))
        else:
            future.set_result(msg.get("result"))

    def client_closed(self) -> None:
        for future in self.own_requests.values():
            if not future.done():
                future.set_exception(ClientRequestError({"message": "client disconnected"}))
        for held in self.held_calls.values():
            held.cancelled.set()

    # ---- upstream → client ---------------------------------------------------------------

    async def _from_server(self, line: Line) -> None:
        data = line.data
        msg = await self._parse(data, "s2c", self.to_client)
        if msg is UNPARSED:
            return
        if isinstance(msg, list):
            out = [await self._server_message(m, len(jsonrpc.dumps(m))) for m in msg]
            if all(o is None for o in out):
                await self.to_client(data)
            else:
                members = [o if o is not None else m for m, o in zip(msg, out, strict=True)]
                await self.to_client(jsonrpc.dumps(members) + b"\n")
            return
        replacement = await self._server_message(msg, len(data))
        if replacement is None:
            await self.to_client(data)
        else:
            await self.to_client(jsonrpc.dumps(replacement) + b"\n")

    async def _server_message(self, msg: Any, size: int) -> dict[str, Any] | None:
        """Audit and route one upstream message; returns a replacement message, or None."""
        kind = kind_of(msg)
        if kind == "invalid":
            await self.record(AuditEvent("s2c", "invalid", size=size, payload=msg))
            return None
        rpc_id = msg.get("id")
        event = AuditEvent(
            "s2c", kind, method=msg.get("method"), rpc_id=id_text(rpc_id), size=size, payload=msg
        )
        replacement = None
        if kind in ("response", "error"):
            pending = self.pending.pop(id_key(rpc_id), None)
            if pending is not None:
                event.method = pending.method
                event.tool = pending.tool
                event.latency_ms = (time.perf_counter() - pending.t0) * 1000
                result = msg.get("result")
                if kind == "response" and isinstance(result, dict):
                    if pending.method in GATED_RESULTS:
                        await self.gate.wait_ready()
                    replacement = await self._on_result(pending, rpc_id, result, event)
        elif kind == "notification" and msg.get("method") == "notifications/tools/list_changed":
            self.gate.tools_changed()
        await self.record(event)
        if replacement is not None:
            await self.record(
                AuditEvent(
                    "gw2c",
                    "response" if "result" in replacement else "error",
                    method=event.method,
                    rpc_id=event.rpc_id,
                    tool=event.tool,
                    size=len(jsonrpc.dumps(replacement)),
                    verdict="block",
                    contract=event.contract,
                    reason=event.reason,
                    trace_id=event.trace_id,
                    payload=replacement,
                )
            )
        return replacement

    async def _on_result(
        self, pending: Pending, rpc_id: Any, result: dict[str, Any], event: AuditEvent
    ) -> dict[str, Any] | None:
        method = pending.method
        if method == "initialize":
            version = result.get("protocolVersion")
            if isinstance(version, str) and version != self.session.protocol_version:
                # The server may negotiate down; the sessions row records what was agreed.
                self.session.protocol_version = version
                if self.on_session_change is not None:
                    self.on_session_change()
            return None
        if method == "tools/list":
            tools = result.get("tools")
            if isinstance(tools, list):
                self.gate.tools_listed(tools)
            return None
        if method not in INSPECTED_METHODS:
            return None
        if method == "tools/call" and pending.tool is not None:
            self.gate.result_seen(pending.tool, result, pending.arguments)
        check = await self.gate.inspect(method, result)
        if method == "tools/call" and pending.tool is not None:
            self.gate.result_inspected(pending.tool, result, check.verdict)
        if check.verdict == "pass" and not check.notes:
            return None
        event.verdict = check.verdict
        event.contract = "detector"
        event.reason = check.reason or None
        event.decided_by = "detector"
        event.detail = check.audit_detail()
        if check.verdict != "block":
            return None
        # The model never reads the payload; the audit keeps the original for forensics.
        trace = new_trace_id()
        event.trace_id = trace
        event.payload_limit = FULL_PAYLOAD_LIMIT
        self.session.last_verdict = "block"
        return blocked_message(method, rpc_id, check, trace, self.session.era)


def blocked_message(
    method: str, rpc_id: Any, check: ResultCheck, trace: str, era: str | None
) -> dict[str, Any]:
    text = (
        f"{BLOCK_PREFIX} this {method} result looked like a prompt injection and was withheld "
        f"({check.reason or 'detector'}). trace id {trace}: `gatewatch logs --trace {trace}`"
    )
    if method == "tools/call":
        return {
            "jsonrpc": "2.0",
            "id": rpc_id,
            "result": jsonrpc.tool_error_result(text, era=era, meta={"gatewatch/trace": trace}),
        }
    return {
        "jsonrpc": "2.0",
        "id": rpc_id,
        "error": {"code": -32001, "message": text, "data": {"trace_id": trace}},
    }


class ClientRequestError(RuntimeError):
    def __init__(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else str(error)
        super().__init__(message or "client answered with an error")
        self.error = error
