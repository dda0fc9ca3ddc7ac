"""Frames that do not pass: refused on the way in, withheld on the way out.

A client line that is not strict gets an answer instead (a JSON-RPC error with the request's own
id, when a forgiving read finds one), a notification is dropped, and the client's answer to a
server request becomes an error to the server. A server line that is not strict, or too large to
scan whole, never reaches the model: each answer in it reaches its pending request as an error
(an isError result for a tool call) naming a trace id, under which the audit keeps the bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proxy.audit import FULL_PAYLOAD_LIMIT, AuditEvent
from proxy.jsonrpc import GW_ID_PREFIX, id_key, id_text
from proxy.relay import loose, messages
from proxy.relay.actions import Action, Record, ToClient, ToServer
from proxy.relay.frames import Pending, audit_id, refused_event
from proxy.relay.listing import ToolListing
from proxy.relay.messages import error_body, line
from proxy.relay.strict import INVALID_REQUEST, FrameError
from proxy.session import Session


class Refusals:
    def __init__(
        self,
        pending: dict[Any, Pending],
        listing: ToolListing,
        session: Session,
        answered: Callable[[str, Any, Any], list[Action]],
    ) -> None:
        self.pending = pending
        self.listing = listing
        self.session = session
        self._answered = answered

    def refuse(
        self, data: bytes, err: FrameError, kind: str, *, size: int | None = None,
        payload: Any = None,
    ) -> list[Action]:
        """A client frame that is not passed: requests get an error with their own id (null
        when it cannot be read), answers to the upstream's requests become errors to it,
        notifications are dropped. The frame's bytes go to the audit (which redacts them)."""
        found = loose.read(data)
        members = found if isinstance(found, list) else [found]
        event = refused_event("c2s", kind, size if size is not None else len(data),
                               data if payload is None else payload, err.reason)
        if isinstance(found, loose.Loose):
            event.method = found.method
            event.rpc_id = audit_id(found.raw_id)
        actions: list[Action] = [Record(event)]
        text = f"gatewatch refused this message: {err.reason}"
        answers: list[bytes] = []
        for m in members:
            if m.kind == "notification":
                continue
            if m.kind == "response" and m.raw_id is not None:
                value = m.id_value
                if isinstance(value, str) and value.startswith(GW_ID_PREFIX):
                    actions += self._answered(value, None, {"message": text})
                else:  # the upstream's request gets an error instead of a garbled answer
                    actions.append(ToServer(error_body(m.raw_id, err.code, text) + b"\n"))
                continue
            answers.append(error_body(m.raw_id, err.code, text))
        if not members:  # a batch too broken to read: one error, as JSON-RPC says
            answers.append(error_body(None, err.code, text))
        if answers:
            out = line(answers, batch=isinstance(found, list) and bool(members))
            actions.append(ToClient(out))
            actions.append(Record(AuditEvent("gw2c", "error", method=event.method,
                                             rpc_id=event.rpc_id, size=len(out), verdict="deny",
                                             contract="frame", reason=err.reason,
                                             decided_by="frame")))
        return actions

    def withhold(
        self, data: bytes, reason: str, kind: str, size: int | None = None
    ) -> list[Action]:
        """An upstream frame that cannot be read strictly or scanned whole: each answer in it
        reaches its pending request as an error with a trace id; each request in it is refused
        back to the upstream; the original bytes stay in the audit."""
        found = loose.read(data)
        members = found if isinstance(found, list) else [found]
        trace = messages.new_trace_id()
        event = refused_event("s2c", kind, size if size is not None else len(data), data, reason)
        event.verdict = "block"
        event.trace_id = trace
        event.payload_limit = FULL_PAYLOAD_LIMIT
        if isinstance(found, loose.Loose):
            event.method = found.method
            event.rpc_id = audit_id(found.raw_id)
        actions: list[Action] = [Record(event)]
        bodies: list[bytes] = []
        for m in members:
            if m.kind == "response" and m.raw_id is not None:
                value = m.id_value
                if self.listing.owns(value):
                    actions += self.listing.done()
                    continue
                answer = self.answer_withheld(value, reason, trace)
                if answer is not None:
                    bodies.append(answer[0])
                    actions.append(Record(answer[1]))
            elif m.kind == "request" and m.raw_id is not None:
                text = f"gatewatch refused this message: {reason}"
                actions.append(ToServer(error_body(m.raw_id, INVALID_REQUEST, text) + b"\n"))
        if bodies:
            actions.insert(0, ToClient(line(bodies, batch=isinstance(found, list))))
        return actions

    def withhold_one(
        self, rpc_id: Any, reason: str, kind: str, size: int, payload: Any
    ) -> tuple[bool, bytes | None, list[Action]]:
        trace = messages.new_trace_id()
        event = refused_event("s2c", kind, size, payload, reason)
        event.verdict, event.trace_id, event.rpc_id = "block", trace, id_text(rpc_id)
        if self.listing.owns(rpc_id):
            return False, None, [Record(event), *self.listing.done()]
        answer = self.answer_withheld(rpc_id, reason, trace)
        if answer is None:
            return False, None, [Record(event)]
        return False, answer[0], [Record(event), Record(answer[1])]

    def answer_withheld(
        self, rpc_id: Any, reason: str, trace: str
    ) -> tuple[bytes, AuditEvent] | None:
        pending = self.pending.pop(id_key(rpc_id), None)
        if pending is None:
            return None
        text = messages.unreadable_text(pending.method, reason, trace)
        body, payload = messages.withheld_body(pending.method, pending.raw_id, text, trace,
                                               self.session.era)
        self.session.last_verdict = "block"
        return body, withheld_event(pending, id_text(rpc_id), len(body), reason, trace,
                                    "frame", payload)


def withheld_event(
pending: Pending, rpc_id: str | None, size: int, reason: str | None, trace: str,
    contract: str, payload: Any,
) -> AuditEvent:
    return AuditEvent(
        "gw2c", "error" if "error" in payload else "response", method=pending.method,
        rpc_id=rpc_id, tool=pending.tool, size=size, verdict="block", contract=contract,
        reason=reason, decided_by=contract, trace_id=trace, payload=payload,
    )

