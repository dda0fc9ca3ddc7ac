"""What the detector tests share: a text scanned the way a tool result reaches the detector."""

from __future__ import annotations

from typing import Any

# A budget no scan here comes near: these tests assert what the detector reads, which a loaded
# machine must not turn into a timeout's warning (the budget has tests of its own).
UNHURRIED_MS = 60_000


def unhurried(**changes: Any) -> Any:
    """The shipped detector (packs and model) with `changes` to its config, and no time
    budget a test could hit."""
    from proxy.detector import DetectorConfig, load_detector

    return load_detector(DetectorConfig(time_budget_ms=UNHURRIED_MS, **changes))


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
