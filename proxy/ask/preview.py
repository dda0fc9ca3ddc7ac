"""A bounded, redacted rendering of a call's arguments for a human to read."""

from __future__ import annotations

from typing import Any

import orjson

from proxy.redact import redact

PREVIEW_LIMIT = 4096  # docs/ipc.md: arguments_preview is at most 4 KiB


def arguments_preview(arguments: dict[str, Any], limit: int = PREVIEW_LIMIT) -> str:
    text = orjson.dumps(redact(arguments, max_string=limit), default=str).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
