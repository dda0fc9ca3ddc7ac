"""The audit row's redaction as it was before session 10's fast paths, kept as the oracle they
are tested against: every JSON value shaped (token-like keys masked, long strings cut) before
it is serialised, every text redacted anew (no memo)."""

from __future__ import annotations

from typing import Any

import orjson

from proxy.audit import DETAIL_LIMIT, AuditEvent, RowText
from proxy.redact import CUT_MARGIN, _replace, _shapes, _starts, _which_start, shape


def reference_redact_text(text: str) -> str:
    if len(text) < 12:
        return text
    parts: list[str] = []
    done = 0
    which = _which_start()
    on_str, on_bytes = _starts()
    found = on_bytes.finditer(text.encode()) if text.isascii() else on_str.finditer(text)
    for candidate in found:
        start = candidate.start()
        if start < done:
            continue
        kinds = which.match(text, start)
        if kinds is None or kinds.lastindex is None:
            continue
        for kind, pattern in _shapes(kinds.lastindex - 1):
            match = pattern.match(text, start)
            if match is not None:
                parts.append(text[done:start])
                parts.append(_replace(kind, match))
                done = match.end()
                break
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def reference_redact_json(obj: Any, limit: int) -> tuple[str, bool]:
    text = orjson.dumps(shape(obj, limit), default=str).decode()
    if len(text) > limit + CUT_MARGIN:
        text = text[: limit + CUT_MARGIN]
    text = reference_redact_text(text)
    if len(text) > limit:
        return text[:limit], True
    return text, False


def reference_payload_text(payload: Any, limit: int) -> tuple[str | None, int]:
    if payload is None:
        return None, 0
    if isinstance(payload, (bytes, bytearray, memoryview)):
        text = reference_redact_text(
            bytes(payload[: limit + CUT_MARGIN]).decode("utf-8", "replace")
        )
        if len(text) > limit or len(payload) > limit + CUT_MARGIN:
            return text[:limit], 1
        return text, 0
    text, cut = reference_redact_json(payload, limit)
    return text, int(cut)


def reference_row_text(event: AuditEvent) -> RowText:
    payload, cut = reference_payload_text(event.payload, event.payload_limit)
    detail = reference_redact_json(event.detail, DETAIL_LIMIT)[0] if event.detail else None
    reason = reference_redact_text(event.reason) if event.reason else event.reason
    return RowText(payload, cut, detail, reason)
