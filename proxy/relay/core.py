"""The relay's decisions, frame by frame: a plain object fed raw lines that returns actions.

Only frames that parse strictly (proxy.relay.strict) and were decided go on; everything else is
answered (a refused request gets a JSON-RPC error with its own id) or withheld (a response that
cannot be read reaches its request as an error with a trace id), and audited with the reason.
Frames that pass unchanged go on as their original bytes.

The core awaits only the gate (components still loading, an asynchronous detector); it never
reads or writes a stream. `proxy.relay.pumps` is the asyncio shell that feeds it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from proxy import jsonrpc
from proxy.audit import FULL_PAYLOAD_LIMIT, AuditEvent
from proxy.decision import Decision
from proxy.gate import BLOCK_PREFIX, Gate
from proxy.jsonrpc import GW_ID_PREFIX, id_key, id_text
from proxy.relay import loose, messages, strict
from proxy.relay.actions import (
    Action,
    Answered,
    HeldCall,
    Hold,
    Hooks,
    Record,
    ToClient,
    ToServer,
)
from proxy.relay.frames import Call, Pending, audit_id, message_kind, refused_event, stamp
from proxy.relay.listing import ToolListing
from proxy.relay.messages import RawId, error_body, line, raw_id, result_body
from proxy.relay.refusals import Refusals, withheld_event
from proxy.relay.strict import INVALID_REQUEST, FrameError
from proxy.session import Session

MAX_PARSE = 64 * 1024 * 1024  # a frame above this is never passed: it cannot be scanned whole
INSPECTED_METHODS = frozenset(("tools/call", "resources/read", "prompts/get"))
# Results that must be objects. Only the inspected ones wait for the components: a tools/list
# answer passes unchanged, and the gate hands its listing to the engine once it has loaded.
GATED_RESULTS = INSPECTED_METHODS | {"tools/list"}
LIST_TIMEOUT = 15.0  # how long a call waits for Gatewatch's own tools/list
_WS = b" \t\r\n"


class RelayCore:
    def __init__(
        self,
        session: Session,
        gate: Gate,
        hooks: Hooks | None = None,
        *,
        max_parse: int = MAX_PARSE,
        list_timeout: float = LIST_TIMEOUT,
    ) -> None:
        self.session = session
        self.gate = gate
        self.hooks = hooks or Hooks()
        self.max_parse = max_parse
        self.list_timeout = list_timeout
        self.pending: dict[Any, Pending] = {}
        self.held: dict[Any, HeldCall] = {}
        self.listed: set[str] = set()  # tool names the upstream listed this session
        self.listing = ToolListing(self._own_id, self._saw_tools, self._decide, list_timeout)
        self.refusals = Refusals(self.pending, self.listing, session, self._answered)
        self._asked_client: set[str] = set()  # ids of Gatewatch's requests to the client
        self._next_id = 0
        self._later: list[Callable[[], None]] = []

    # ---- work that waits until the frame is on its way ---------------------------------------

    @property
    def has_later(self) -> bool:
        """Is there work waiting for the frame to be on its way?"""
        return bool(self._later)

    def run_later(self) -> None:
        """Taint recording of results already scanned and passed. The shell calls this after
        writing; the core also calls it before any decision, so no call is decided without it."""
        while self._later:
            self._later.pop(0)()

    # ---- client → upstream -------------------------------------------------------------------

    async def client_frame(self, data: bytes) -> list[Action]:
        self.run_later()
        if len(data) > self.max_parse:  # read whole in one go, still too large to decide
            return self.client_oversize(data, len(data))
        if not data.strip(_WS):
            return []  # a blank line is not a frame; nobody needs it
        try:
            msg, canonical = strict.parse(data)
        except FrameError as err:
            return self.refusals.refuse(data, err, "parse_error")
        if isinstance(msg, list):
            return await self._client_batch(msg, data, canonical)
        kind = message_kind(msg)
        if kind == "invalid":
            return self.refusals.refuse(data, FrameError(INVALID_REQUEST, "not a JSON-RPC message"),
                                "invalid", payload=msg)
        rid = raw_id(msg.get("id")) if canonical else self._raw_id_of(data, msg)
        return await self._client_message(msg, data, rid, kind)

    def client_oversize(self, head: bytes, size: int) -> list[Action]:
        err = FrameError(INVALID_REQUEST, f"a frame of {size} bytes is over the "
                                          f"{self.max_parse}-byte limit")
        return self.refusals.refuse(head[: loose.SCAN_LIMIT], err, "oversize", size=size)

    def _raw_id_of(self, data: bytes, msg: dict[str, Any]) -> RawId:
        found = loose.read(data)
        if isinstance(found, loose.Loose) and found.raw_id is not None:
            return found.raw_id
        return raw_id(msg.get("id"))

    async def _client_message(
        self, msg: dict[str, Any], data: bytes, rid: RawId, kind: str | None = None
    ) -> list[Action]:
        kind = kind or message_kind(msg)
        rpc_id = msg.get("id")
        method: str = msg.get("method", "")
        params = msg.get("params")
        params = params if isinstance(params, dict) else {}
        event = AuditEvent(
            "c2s", kind, method=method, rpc_id=audit_id(rid, rpc_id), size=len(data), payload=msg
        )
        if kind == "request":
            if self._in_use(rpc_id):
                return self._duplicate_id(rid, event)
            self._observe_client(method, params)
            if method == "tools/call":
                return await self._call(Call(msg, data, rid, params, event))
            self._track(rpc_id, Pending(method, rid))
            return [ToServer(data), Record(event)]
        if kind == "notification" and method == "tools/call":
            # No id, so no answer and no way to hold it: a call nobody decided never runs.
            stamp(event, Decision("deny", "frame", "tools/call sent as a notification"), "frame")
            return [Record(event)]
        if kind == "notification":
            cancelled = []
            if method == "notifications/cancelled":
                cancelled = self._cancel(params.get("requestId"))
            return [ToServer(data), Record(event), *cancelled]
        if isinstance(rpc_id, str) and rpc_id.startswith(GW_ID_PREFIX):
            event.direction = "c2gw"
            return [Record(event), *self._answered(rpc_id, msg.get("result"), msg.get("error"))]
        return [ToServer(data), Record(event)]

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
        if changed:
            self.hooks.session_changed()

    def _track(self, rpc_id: Any, pending: Pending) -> None:
        key = id_key(rpc_id)
        if key is not None:
            pending.t0 = time.perf_counter()
            self.pending[key] = pending

    def _in_use(self, rpc_id: Any) -> bool:
        """Is this id already waiting for an answer? Two answers could not be told apart."""
        key = id_key(rpc_id)
        return key is not None and (
            key in self.pending or key in self.held
            or any(call.key == key for call in self.listing.parked)
        )

    def _duplicate_id(self, rid: RawId, event: AuditEvent) -> list[Action]:
        reason = "its id is already in use by a request still waiting for its answer"
        event.verdict, event.contract, event.decided_by, event.reason = (
            "deny", "frame", "frame", reason)
        out = error_body(rid, INVALID_REQUEST, f"gatewatch refused this message: {reason}")
        return [ToClient(out + b"\n"), Record(event)]

    def _answered(self, rpc_id: str, result: Any, error: Any) -> list[Action]:
        if rpc_id not in self._asked_client:
            return []  # a late or unknown answer to a Gatewatch request: nobody waits for it
        self._asked_client.discard(rpc_id)
        return [Answered(rpc_id, result, error)]

    # ---- tools/call ------------------------------------------------------------------------------

    async def _call(self, call: Call) -> list[Action]:
        await self.gate.wait_ready()
        self.session.calls += 1
        if self._must_list(call.tool):
            return self.listing.park(call)
        return self._decide(call)

    def _must_list(self, tool: str) -> bool:
        """A call for a tool this session has not listed (or after list_changed): Gatewatch
        lists the tools itself first, so the call is decided against the real definition."""
        if not tool or not self.gate.pins_tools:
            return False
        return tool not in self.listed or self.gate.listing_stale()

    def _verdict(self, call: Call) -> Decision:
        self.run_later()
        verdict = self.gate.decide(call.tool, call.arguments)
        stamp(call.event, verdict, "rules")
        call.event.tool = call.tool
        self.session.last_verdict = verdict.verdict
        return verdict

    def _decide(self, call: Call) -> list[Action]:
        verdict = self._verdict(call)
        record = Record(call.event)
        if verdict.verdict == "allow":
            self._track(call.msg.get("id"),
                        Pending("tools/call", call.raw_id, call.tool, call.arguments))
            return [ToServer(self._allowed_bytes(call)), record]
        if verdict.verdict == "ask":
            if self.gate.asker is not None and call.key is not None:
                held = HeldCall(call.msg, call.data, call.raw_id, call.tool, call.arguments,
                                verdict, asyncio.Event())
                self.held[call.key] = held
                return [record, Hold(held)]
            return [record, *self.deny_call(
                call.raw_id, call.tool, f"{verdict.reason} (no way to ask a human)",
                decided_by="fallback", contract=verdict.contract, rpc_id=call.msg.get("id"))]
        return [record, *self.deny_call(call.raw_id, call.tool, verdict.reason, decided_by="rules",
                                        contract=verdict.contract, rpc_id=call.msg.get("id"))]

    def _allowed_bytes(self, call: Call) -> bytes:
        asker = self.gate.asker
        if "requestState" in call.params and asker is not None:
            stripped = asker.own_retry(call.params)
            if stripped is not None:
                # A 2026-07-28 retry the rules now allow: Gatewatch's fields stay here.
                return jsonrpc.dumps({**call.msg, "params": stripped}) + b"\n"
        return call.data

    def deny_call(
        self,
        rid: RawId,
        tool: str,
        reason: str,
        *,
        decided_by: str,
        contract: str,
        detail: dict[str, Any] | None = None,
        rpc_id: Any = None,
    ) -> list[Action]:
        """Answer a tools/call with an isError result; the upstream never sees it."""
        self.session.denied += 1
        self.session.last_verdict = "deny"
        result = jsonrpc.tool_error_result(f"{BLOCK_PREFIX} {reason}", era=self.session.era)
        out = result_body(rid, result) + b"\n"
        event = AuditEvent(
            "gw2c", "response", method="tools/call", rpc_id=audit_id(rid, rpc_id), tool=tool,
            size=len(out), verdict="deny", contract=contract, reason=reason,
            decided_by=decided_by, detail=detail, payload=result,
        )
        return [ToClient(out), Record(event)]

    def reply(self, rid: RawId, result: dict[str, Any], event: AuditEvent) -> list[Action]:
        """A result Gatewatch made (e.g. input_required) in answer to a client request."""
        out = result_body(rid, result) + b"\n"
        event.size = len(out)
        event.payload = result
        return [ToClient(out), Record(event)]

    def forward_held(self, held: HeldCall, data: bytes | None = None) -> list[Action]:
        """An ask settled as allow: the call goes upstream (the original bytes by default)."""
        self._track(held.msg.get("id"),
                    Pending("tools/call", held.raw_id, held.tool, held.arguments))
        return [ToServer(held.data if data is None else data)]

    def settled(self, held: HeldCall) -> None:
        key = id_key(held.msg.get("id"))
        if self.held.get(key) is held:
            del self.held[key]

    def _cancel(self, request_id: Any) -> list[Action]:
        key = id_key(request_id)
        held = self.held.get(key)
        if held is not None:
            held.cancelled.set()
        return self.listing.cancel(key)

    # ---- Gatewatch's own tools/list ------------------------------------------------------------

    def _own_id(self) -> str:
        self._next_id += 1
        return f"{GW_ID_PREFIX}{self._next_id}"

    def _saw_tools(self, tools: list[Any]) -> None:
        self.gate.tools_listed(tools)
        self.listed.update(
            t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
        )

    # ---- requests Gatewatch sends the client (elicitation) -----------------------------------

    def client_request(self, method: str, params: dict[str, Any]) -> tuple[str, list[Action]]:
        rpc_id = self._own_id()
        self._asked_client.add(rpc_id)
        msg = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        out = jsonrpc.dumps(msg) + b"\n"
        event = AuditEvent("gw2c", "request", method=method, rpc_id=rpc_id, size=len(out),
                           payload=msg)
        return rpc_id, [ToClient(out), Record(event)]

    def forget_client_request(self, rpc_id: str) -> None:
        self._asked_client.discard(rpc_id)

    def client_gone(self) -> None:
        for held in self.held.values():
            held.cancelled.set()

    # ---- client batches --------------------------------------------------------------------------

    async def _client_batch(self, batch: list[Any], data: bytes, canonical: bool) -> list[Action]:
        """Batches (2025-03-26) are decided per member; refused and denied members are answered
        by Gatewatch in one batch, the rest go upstream (the original bytes when all of them)."""
        if not batch:
            empty = FrameError(INVALID_REQUEST, "an empty batch")
            return self.refusals.refuse(data, empty, "invalid")
        found = [] if canonical else loose.read(data)
        rids = [
            raw_id(m.get("id") if isinstance(m, dict) else None) if canonical
            else (found[i].raw_id or messages.NULL_ID)
            if isinstance(found, list) and i < len(found) else messages.NULL_ID
            for i, m in enumerate(batch)
        ]
        if any(isinstance(m, dict) and m.get("method") == "tools/call" for m in batch):
            await self.gate.wait_ready()
        forward: list[Any] = []
        answers: list[bytes] = []
        actions: list[Action] = []
        for member, rid in zip(batch, rids, strict=True):
            size = len(jsonrpc.dumps(member))
            kind = message_kind(member)
            if kind == "invalid":
                actions.append(Record(refused_event("c2s", "invalid", size, member,
                                                     "not a JSON-RPC message")))
                answers.append(error_body(rid if rid != messages.NULL_ID else None,
                                          INVALID_REQUEST, "gatewatch refused this message: "
                                          "not a JSON-RPC message"))
                continue
            if kind == "request" and self._in_use(member["id"]):
                dup = self._duplicate_id(rid, AuditEvent("c2s", "request", size=size,
                                                         payload=member))
                answers += [a.data.rstrip(b"\n") for a in dup if isinstance(a, ToClient)]
                actions += [a for a in dup if isinstance(a, Record)]
                continue
            if kind == "request" and member["method"] == "tools/call":
                params = member.get("params")
                event = AuditEvent("c2s", "request", method="tools/call",
                                   rpc_id=id_text(member.get("id")), size=size, payload=member,
                                   detail={"batch": len(batch)})
                call = Call(member, jsonrpc.dumps(member) + b"\n", rid,
                            params if isinstance(params, dict) else {}, event)
                self.session.calls += 1
                if self._must_list(call.tool):
                    # Decided after the listing, then sent on its own line.
                    actions += self.listing.park(call)
                    continue
                verdict = self._verdict(call)
                actions.append(Record(event))
                if verdict.verdict == "allow":
                    self._track(member.get("id"),
                                Pending("tools/call", rid, call.tool, call.arguments))
                    forward.append(member)
                    continue
                reason = verdict.reason
                if verdict.verdict == "ask":
                    reason = f"{reason} (cannot ask inside a JSON-RPC batch)"
                denied = self.deny_call(rid, call.tool, reason, decided_by="rules",
                                        contract=verdict.contract, rpc_id=member.get("id"))
                answers += [a.data.rstrip(b"\n") for a in denied if isinstance(a, ToClient)]
                actions += [a for a in denied if isinstance(a, Record)]
                continue
            for action in await self._client_message(member, b"", rid):
                if isinstance(action, ToServer):
                    forward.append(member)
                elif isinstance(action, Record):
                    action.event.size = size
                    actions.append(action)
                else:
                    actions.append(action)
        out: list[Action] = []
        if len(forward) == len(batch):
            out.append(ToServer(data))
        elif forward:
            out.append(ToServer(jsonrpc.dumps(forward) + b"\n"))
        if answers:
            out.append(ToClient(line(answers, batch=True)))
        return out + actions

    # ---- upstream → client -----------------------------------------------------------------------

    async def server_frame(self, data: bytes) -> list[Action]:
        if len(data) > self.max_parse:
            return self.server_oversize(data[:FULL_PAYLOAD_LIMIT], len(data))
        if not data.strip(_WS):
            return []
        try:
            msg, _ = strict.parse(data)
        except FrameError as err:
            return self.refusals.withhold(data, err.reason, "parse_error")
        if isinstance(msg, list):
            return await self._server_batch(msg, data)
        keep, body, actions = await self._server_message(msg, len(data))
        if keep:
            return [ToClient(data), *actions]
        if body is not None:
            return [ToClient(body + b"\n"), *actions]
        return actions

    def server_oversize(self, head: bytes, size: int) -> list[Action]:
        reason = f"{size} bytes, over the {self.max_parse}-byte limit it can scan whole"
        return self.refusals.withhold(head, reason, "oversize", size=size)

    async def _server_batch(self, batch: list[Any], data: bytes) -> list[Action]:
        kept: list[Any] = []
        changed = False
        actions: list[Action] = []
        for member in batch:
            keep, body, more = await self._server_message(member, len(jsonrpc.dumps(member)))
            actions += more
            if keep:
                kept.append(jsonrpc.dumps(member))
            else:
                changed = True
                if body is not None:
                    kept.append(body)
        if not changed:
            return [ToClient(data), *actions]
        return ([ToClient(line(kept, batch=True))] if kept else []) + actions

    async def _server_message(
        self, msg: Any, size: int
    ) -> tuple[bool, bytes | None, list[Action]]:
        """(pass the original?, replacement body, actions) for one upstream message."""
        kind = message_kind(msg)
        if kind == "invalid":
            rpc_id = msg.get("id") if isinstance(msg, dict) else None
            return self.refusals.withhold_one(rpc_id, "not a JSON-RPC message", "invalid",
                                              size, msg)
        rpc_id = msg.get("id")
        event = AuditEvent("s2c", kind, method=msg.get("method"), rpc_id=id_text(rpc_id),
                           size=size, payload=msg)
        if kind == "request":
            return True, None, [Record(event)]
        if kind == "notification":
            if msg["method"] == "notifications/tools/list_changed":
                self.gate.tools_changed()
            return True, None, [Record(event)]
        if self.listing.owns(rpc_id):
            return False, None, self.listing.answer(msg, event)
        pending = self.pending.pop(id_key(rpc_id), None)
        if pending is None:
            if rpc_id is None:  # the upstream's complaint about a frame: nothing for a model
                return True, None, [Record(event)]
            event.verdict, event.contract, event.decided_by = "block", "frame", "frame"
            event.reason = "an answer to no pending request"
            return False, None, [Record(event)]
        event.method, event.tool = pending.method, pending.tool
        event.latency_ms = (time.perf_counter() - pending.t0) * 1000
        result = msg.get("result")
        if kind == "error":
            if pending.method not in INSPECTED_METHODS:
                return True, None, [Record(event)]
            # An error's message and data reach the model as surely as a result's text:
            # scanned and tainted the same way, withheld the same way.
            await self.gate.wait_ready()
            return await self._on_result(pending, error_as_result(msg.get("error")), event,
                                         original_error=True)
        if pending.method in GATED_RESULTS:
            if not isinstance(result, dict):
                self.pending[id_key(rpc_id)] = pending
                return self.refusals.withhold_one(rpc_id, "the result is not an object", "invalid",
                                          size, msg)
            if pending.method in INSPECTED_METHODS:
                await self.gate.wait_ready()
        if not isinstance(result, dict):
            return True, None, [Record(event)]
        return await self._on_result(pending, result, event)

    async def _on_result(
        self, pending: Pending, result: dict[str, Any], event: AuditEvent,
        *, original_error: bool = False,
    ) -> tuple[bool, bytes | None, list[Action]]:
        method = "tools/call" if original_error else pending.method
        if method == "initialize":
            version = result.get("protocolVersion")
            if isinstance(version, str) and version != self.session.protocol_version:
                # The server may negotiate down; the sessions row records what was agreed.
                self.session.protocol_version = version
                self.hooks.session_changed()
        elif method == "tools/list":
            tools = result.get("tools")
            if isinstance(tools, list):
                self._saw_tools(tools)
        if method not in INSPECTED_METHODS:
            return True, None, [Record(event)]
        check = await self.gate.inspect(method, result)
        if pending.method == "tools/call" and pending.tool is not None:
            tool, arguments = pending.tool, pending.arguments
            verdict = check.verdict
            self._later.append(lambda: self.gate.result_seen(tool, result, arguments))
            self._later.append(lambda: self.gate.result_inspected(tool, result, verdict))
        if check.verdict == "pass" and not check.notes:
            return True, None, [Record(event)]
        event.verdict = check.verdict
        event.contract = event.decided_by = "detector"
        event.reason = check.reason or None
        event.detail = check.audit_detail()
        if check.verdict != "block":
            return True, None, [Record(event)]
        # The model never reads the payload; the audit keeps the original for forensics.
        trace = messages.new_trace_id()
        event.trace_id = trace
        event.payload_limit = FULL_PAYLOAD_LIMIT
        self.session.last_verdict = "block"
        text = messages.blocked_text(pending.method, check.reason, trace)
        body, payload = messages.withheld_body(pending.method, pending.raw_id, text, trace,
                                               self.session.era)
        return False, body, [Record(event), Record(withheld_event(
            pending, event.rpc_id, len(body), check.reason or None, trace, "detector", payload))]


def error_as_result(error: Any) -> dict[str, Any]:
    """A JSON-RPC error as the text a model would read (its message, then its data)."""
    if not isinstance(error, dict):
        return {"content": [{"type": "text", "text": jsonrpc.dumps(error).decode()}]}
    parts = [error["message"]] if isinstance(error.get("message"), str) else []
    if "data" in error:
        data = error["data"]
        parts.append(data if isinstance(data, str) else jsonrpc.dumps(data).decode())
    return {"content": [{"type": "text", "text": "\n".join(parts)}]}
