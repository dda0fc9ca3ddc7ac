"""Match compiled rules against prepared segments, window by window, within a deadline.

Long texts are searched in overlapping windows so the deadline can be checked between them.
The overlap is at least the widest match any rule can make (redos.MAX_MATCH_WIDTH), so a phrase
that straddles a window edge is still found whole in the next window.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from proxy.detector.normalize import Prepared, Segment
from proxy.detector.redos import MAX_MATCH_WIDTH
from proxy.detector.rules import Rule

WINDOW = 64 * 1024
OVERLAP = MAX_MATCH_WIDTH
EXCERPT_CHARS = 80


@dataclass
class ScanResult:
    hits: list[Rule] = field(default_factory=list)
    excerpts: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False


def _applies(rule: Rule, segment: Segment) -> bool:
    if rule.view == "lines":
        return segment.kind == "lines"
    if segment.kind == "lines":
        return False
    return rule.segments is None or segment.kind in rule.segments


def windows(length: int, window: int = WINDOW, overlap: int = OVERLAP) -> list[tuple[int, int]]:
    """(start, end) spans covering [0, length) where neighbours share `overlap` characters."""
    if length <= window:
        return [(0, length)]
    spans = []
    start = 0
    while True:
        end = min(start + window, length)
        spans.append((start, end))
        if end == length:
            return spans
        start = end - overlap


def scan(
    prepared: Prepared,
    rules: list[Rule],
    deadline: float | None,
    *,
    window: int = WINDOW,
) -> ScanResult:
    result = ScanResult()
    found: set[str] = set()
    for rule in rules:
        if rule.signal is not None and rule.signal in prepared.signals:
            found.add(rule.id)
            result.hits.append(rule)
            result.excerpts[rule.id] = f"signal:{rule.signal}"
    pattern_rules = [rule for rule in rules if rule.regex is not None]
    for segment in prepared.segments:
        applicable = [r for r in pattern_rules if _applies(r, segment)]
        text = segment.text
        for start, end in windows(len(text), window):
            if deadline is not None and time.perf_counter() > deadline:
                result.timed_out = True
                return result
            for rule in applicable:
                if rule.id in found:
                    continue
                assert rule.regex is not None
                match = rule.regex.search(text, start, end)
                # A match touching the window's end may be cut short by it (\b, lookahead):
                # the next window starts at least OVERLAP earlier and sees it whole.
                if match is None or (match.end() == end and end != len(text)):
                    continue
                found.add(rule.id)
                result.hits.append(rule)
                result.excerpts[rule.id] = match.group()[:EXCERPT_CHARS]
    return result
