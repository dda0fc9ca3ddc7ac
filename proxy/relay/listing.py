"""Gatewatch's own tools/list, for a call that names a tool this session has not listed.

A client may call a tool before it ever listed the tools (the SDK clients allow it). The call
waits while Gatewatch asks the upstream itself (a `gw-` id, never shown to the client, every
page followed), the engine pins from that answer, and then the call is decided as usual: it is
denied only if the tool really is unknown or changed. Calls arriving meanwhile wait for the
same listing and are decided in the order they came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy import jsonrpc
from proxy.audit import AuditEvent
from proxy.relay.actions import Action, Record, Timer, ToServer
from proxy.relay.frames import Call, era_meta

MAX_PAGES = 100


@dataclass(slots=True)
class _Request:
    rpc_id: str
    meta: dict[str, Any] | None
    pages: int


class ToolListing:
    def __init__(
        self,
        new_id: Callable[[], str],
        saw_tools: Callable[[list[Any]], None],
        decide: Callable[[Call], list[Action]],
        timeout: float,
    ) -> None:
        self._new_id = new_id
        self._saw_tools = saw_tools
        self._decide = decide
        self.timeout = timeout
        self.current: _Request | None = None
        self.parked: list[Call] = []

    def park(self, call: Call) -> list[Action]:
        """Hold `call` until the listing is in (starting one unless it is under way)."""
        self.parked.append(call)
        return [] if self.current is not None else self._ask(None, era_meta(call.params), 1)

    def owns(self, rpc_id: Any) -> bool:
        return self.current is not None and rpc_id == self.current.rpc_id

    def answer(self, msg: dict[str, Any], event: AuditEvent) -> list[Action]:
        """The upstream's answer to the current page."""
        event.direction = "s2gw"
        event.method = "tools/list"
        result = msg.get("result")
        current = self.current
        if isinstance(result, dict) and current is not None:
            tools = result.get("tools")
            if isinstance(tools, list):
                self._saw_tools(tools)
            cursor = result.get("nextCursor")
            if isinstance(cursor, str) and cursor and current.pages < MAX_PAGES:
                return [Record(event), *self._ask(cursor, current.meta, current.pages + 1)]
        return [Record(event), *self.done()]

    def done(self) -> list[Action]:
        """The listing is over (answered, failed, or timed out): decide the waiting calls."""
        self.current = None
        parked, self.parked = self.parked, []
        actions: list[Action] = []
        for call in parked:
            actions += self._decide(call)
        return actions

    def cancel(self, key: Any) -> list[Action]:
        """The client cancelled a waiting call: it expects no answer, nothing goes upstream."""
        if key is None:
            return []
        cancelled = [c for c in self.parked if c.key == key]
        for call in cancelled:
            self.parked.remove(call)
            call.event.tool = call.tool
            call.event.verdict, call.event.decided_by = "deny", "cancelled"
            call.event.reason = "cancelled by the client while Gatewatch listed the tools"
        return [Record(c.event) for c in cancelled]

    def _ask(self, cursor: str | None, meta: dict[str, Any] | None, pages: int) -> list[Action]:
        request = _Request(self._new_id(), meta, pages)
        self.current = request
        params: dict[str, Any] = {}
        if cursor is not None:
            params["cursor"] = cursor
        if meta:
            params["_meta"] = meta
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request.rpc_id, "method": "tools/list"}
        if params:
            msg["params"] = params
        out = jsonrpc.dumps(msg) + b"\n"
        event = AuditEvent("gw2s", "request", method="tools/list", rpc_id=request.rpc_id,
                           size=len(out), payload=msg, reason="a call named a tool not listed yet")
        return [ToServer(out), Record(event),
                Timer(self.timeout, lambda: self._timed_out(request))]

    def _timed_out(self, request: _Request) -> list[Action]:
        if self.current is not request:
            return []
        event = AuditEvent("gw", "lifecycle", method="tools/list", rpc_id=request.rpc_id,
                           reason=f"no answer to Gatewatch's tools/list in {self.timeout:g} s")
        return [Record(event), *self.done()]
