"""JSON-RPC 2.0 framing helpers: parse a line, classify it, build the few messages we originate.

The relay forwards original bytes; parsing here only tells it what a frame is. Messages Gatewatch
originates use string ids starting with "gw-" so they can never collide with a client's ids.
"""

from __future__ import annotations

from typing import Any

try:
    import orjson

    def loads(data: bytes | str) -> Any:
        return orjson.loads(data)

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - orjson is a declared dependency
    import json

    def loads(data: bytes | str) -> Any:
        return json.loads(data)

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


JSONDecodeError = ValueError  # orjson.JSONDecodeError and json.JSONDecodeError both subclass it

GW_ID_PREFIX = "gw-"

# Protocol era names used across Gatewatch.
ERA_HANDSHAKE = "handshake"
ERA_2026 = "2026-07-28"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def kind_of(msg: Any) -> str:
    """request | notification | response | error | invalid (for one non-batch message)."""
    if not isinstance(msg, dict):
        return "invalid"
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    if "error" in msg:
        return "error"
    if "result" in msg:
        return "response"
    return "invalid"


def id_text(rpc_id: Any) -> str | None:
    """The id as stored in the audit log (strings stay strings, numbers become text)."""
    if rpc_id is None:
        return None
    return rpc_id if isinstance(rpc_id, str) else dumps(rpc_id).decode()


def id_key(rpc_id: Any) -> Any:
    """A dict key for an id; str "1" and int 1 are different ids in JSON-RPC."""
    if isinstance(rpc_id, (str, int, float)) and not isinstance(rpc_id, bool):
        return (type(rpc_id) is str, rpc_id)
    return None


def error_response(rpc_id: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return dumps({"jsonrpc": "2.0", "id": rpc_id, "error": err}) + b"\n"


def tool_error_result(text: str, *, era: str | None, meta: dict[str, Any] | None = None) -> dict:
    """A normal tools/call result that tells the model the call failed (isError)."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if era == ERA_2026:
        result["resultType"] = "complete"
    if meta:
        result["_meta"] = meta
    return result
