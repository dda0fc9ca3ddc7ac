"""What the detector tests share: a text scanned the way a tool result reaches the detector."""

from __future__ import annotations

from typing import Any


def inspect(detector: Any, text: str) -> Any:
    """`detector`'s verdict on `text` returned as a `tools/call` result's one text block."""
    return detector.inspect_result("tools/call", {"content": [{"type": "text", "text": text}]})


def assert_read_as(detector: Any, written: str, meant: str, note: str) -> None:
    """`written` (an attack respelled) is decided as `meant` (the same attack written plainly,
    which `detector` blocks): blocked, by at least the same rules, with the view's `note`."""
    as_meant = inspect(detector, meant)
    assert as_meant.verdict == "block", as_meant.reason  # the rules know the plain version
    found = inspect(detector, written)
    assert found.verdict == "block", (written, found.reason)
    assert set(found.rules) >= set(as_meant.rules)
    assert note in found.notes
