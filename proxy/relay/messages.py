"""The messages Gatewatch writes itself, with the id exactly as the peer wrote it.

Ids are kept as their JSON text (`RawId`): re-serialising a parsed id would turn
18446744073709551616 into 1.8446744073709552e+19, and the client could not match the answer.
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from proxy import jsonrpc
from proxy.gate import BLOCK_PREFIX

RawId = bytes  # an id's JSON text
NULL_ID: RawId = b"null"
WITHHELD_CODE = -32001  # the JSON-RPC error for a non-tool answer Gatewatch withheld


def raw_id(value: Any) -> RawId:
    """The JSON text of an id Gatewatch chose or read from a canonical frame."""
    return NULL_ID if value is None else orjson.dumps(value)


def result_body(rid: RawId, result: dict[str, Any]) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + rid + b',"result":' + orjson.dumps(result) + b"}"


def error_body(rid: RawId | None, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return b'{"jsonrpc":"2.0","id":' + (rid or NULL_ID) + b',"error":' + orjson.dumps(err) + b"}"


def line(bodies: list[bytes], batch: bool = False) -> bytes:
    """One frame: a single message, or a JSON-RPC batch when the peer sent one."""
    if batch:
        return b"[" + b",".join(bodies) + b"]\n"
    assert len(bodies) == 1
    return bodies[0] + b"\n"


def new_trace_id() -> str:
    return secrets.token_hex(6)


def withheld_body(
    method: str, rid: RawId, text: str, trace: str, era: str | None
) -> tuple[bytes, dict[str, Any]]:
    """What the client gets instead of an answer Gatewatch did not pass (body, payload for the
    audit): an isError result for a tool call, a JSON-RPC error for anything else."""
    if method == "tools/call":
        result = jsonrpc.tool_error_result(text, era=era, meta={"gatewatch/trace": trace})
        return result_body(rid, result), result
    error = {"code": WITHHELD_CODE, "message": text, "data": {"trace_id": trace}}
    return error_body(rid, WITHHELD_CODE, text, {"trace_id": trace}), {"error": error}


def blocked_text(method: str, reason: str, trace: str) -> str:
    return (
        f"{BLOCK_PREFIX} this {method} result looked like a prompt injection and was withheld "
        f"({reason or 'detector'}). trace id {trace}: `gatewatch logs --trace {trace}`"
    )


def unreadable_text(method: str, reason: str, trace: str) -> str:
    return (
        f"{BLOCK_PREFIX} the server's answer to this {method} could not be read safely and was "
        f"withheld ({reason}). trace id {trace}: `gatewatch logs --trace {trace}`"
    )
