"""What the detector tests share: a text scanned the way a tool result reaches the detector."""

from __future__ import annotations

from typing import Any


def inspect(detector: Any, text: str) -> Any:
    """`detector`'s verdict on `text` returned as a `tools/call` result's one text block."""
    return detector.inspect_result("tools/call", {"content": [{"type": "text", "text": text}]})
