"""What the client gets instead of a blocked result: a short, payload-free explanation."""

from __future__ import annotations

from typing import Any

from proxy.detector.inspection import Inspection


def blocked_message(inspection: Inspection, trace_id: str) -> str:
    reason = inspection.reason or "possible prompt injection"
    return (
        f"Gatewatch blocked this result: {reason}. The original is kept in the local audit log "
        f"(trace {trace_id}); it was not shown to the model."
    )


def blocked_result(
    method: str, inspection: Inspection, trace_id: str, original: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A JSON-RPC `result` to send in place of a blocked one, shaped for `method`.

    tools/call gets `isError: true` with one text item; resources/read and prompts/get keep their
    own shapes with the explanation as the only content. `resultType` (2026-07-28 era) is kept
    when the original had it, since clients reject results without it in that era.
    """
    text = blocked_message(inspection, trace_id)
    original = original if isinstance(original, dict) else {}
    meta = {"io.gatewatch/trace_id": trace_id, "io.gatewatch/verdict": "block"}
    out: dict[str, Any]
    if method == "resources/read":
        uri = ""
        contents = original.get("contents")
        if isinstance(contents, list) and contents and isinstance(contents[0], dict):
            uri = str(contents[0].get("uri", ""))
        out = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}
    elif method == "prompts/get":
        out = {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
    else:
        out = {"content": [{"type": "text", "text": text}], "isError": True}
    out["_meta"] = meta
    if "resultType" in original:
        out["resultType"] = original["resultType"]
    return out
