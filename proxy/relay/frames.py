"""What the core knows about a frame it decided: pending requests, tools/calls, message kinds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proxy import jsonrpc
from proxy.audit import AuditEvent
from proxy.decision import Decision
from proxy.jsonrpc import id_key
from proxy.relay.messages import NULL_ID, RawId

_META_KEYS = (jsonrpc.META_PROTOCOL_VERSION, jsonrpc.META_CLIENT_CAPS, jsonrpc.META_CLIENT_INFO)


@dataclass(slots=True)
class Pending:
    """A client request the upstream has not answered yet."""

    method: str
    raw_id: RawId
    tool: str | None = None
    arguments: dict[str, Any] | None = None  # of a tools/call, for the engine's taint step
    t0: float = 0.0


@dataclass(slots=True)
class Call:
    """A tools/call as the core decides it (tool, arguments and key read once, on arrival)."""

    msg: dict[str, Any]
    data: bytes  # what goes upstream when it is allowed
    raw_id: RawId
    params: dict[str, Any]
    event: AuditEvent
    tool: str = field(init=False)
    arguments: dict[str, Any] = field(init=False)
    key: Any = field(init=False)

    def __post_init__(self) -> None:
        name = self.params.get("name")
        self.tool = name if isinstance(name, str) else ""
        args = self.params.get("arguments")
        self.arguments = args if isinstance(args, dict) else {}
        self.key = id_key(self.msg.get("id"))


def message_kind(msg: Any) -> str:
    """request | notification | response | error | invalid, checking the fields' types."""
    kind = jsonrpc.kind_of(msg)
    if kind in ("request", "notification") and not isinstance(msg["method"], str):
        return "invalid"
    if kind != "notification" and kind != "invalid":
        rpc_id = msg.get("id")
        valid = isinstance(rpc_id, (str, int, float)) and not isinstance(rpc_id, bool)
        if not valid and not (kind == "error" and rpc_id is None):
            return "invalid"
    return kind


def stamp(event: AuditEvent, verdict: Decision, decided_by: str) -> None:
    event.verdict = verdict.verdict
    event.contract = verdict.contract
    event.reason = verdict.reason
    event.decided_by = decided_by
    event.detail = verdict.audit_detail()


def refused_event(direction: str, kind: str, size: int, payload: Any, reason: str) -> AuditEvent:
    return AuditEvent(direction, kind, size=size, verdict="deny", contract="frame",
                      reason=reason, decided_by="frame", payload=payload)


def audit_id(rid: RawId | None, value: Any = None) -> str | None:
    """The id as the audit log stores it: strings unquoted, numbers as written."""
    if isinstance(value, str):
        return value
    if rid is None or rid == NULL_ID:
        return None
    if rid[:1] == b'"':
        try:
            text = jsonrpc.loads(rid)
        except ValueError:
            return None
        return text if isinstance(text, str) else None
    return rid.decode("ascii", "replace")


def era_meta(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The 2026-07-28 era's per-request _meta (protocol version, capabilities, client info),
    copied from a call onto Gatewatch's own request so the upstream reads it the same way."""
    meta = params.get("_meta") if params else None
    if not isinstance(meta, dict) or jsonrpc.META_PROTOCOL_VERSION not in meta:
        return None
    return {key: meta[key] for key in _META_KEYS if key in meta}
