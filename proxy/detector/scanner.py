"""Match rules against prepared segments: one RE2 set pass per window, then confirm the hits.

RE2 matches in linear time, so no input can make a pattern backtrack; a set of all patterns is
searched in one pass and only the rules it reports are searched again for their match (the
excerpt). Long segments are searched in overlapping windows so the deadline is checked between
them. The overlap is at least the widest match any rule can make (redos.MAX_MATCH_WIDTH), so a
phrase that straddles a window edge is still found whole in the next window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from proxy.detector.normalize import Prepared, Segment
from proxy.detector.redos import MAX_MATCH_WIDTH
from proxy.detector.rules import Rule, re2_options

WINDOW = 256 * 1024
OVERLAP = MAX_MATCH_WIDTH
EXCERPT_CHARS = 80


class CompiledRules:
    """Rules split by view, each group's patterns compiled into one RE2 set."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.signal_rules = [rule for rule in rules if rule.signal is not None]
        self.flat = [rule for rule in rules if rule.regex is not None and rule.view == "flat"]
        self.lines = [rule for rule in rules if rule.regex is not None and rule.view == "lines"]
        self.flat_set = _build_set(self.flat, lines=False)
        self.lines_set = _build_set(self.lines, lines=True)
        self.flat_match = set_matcher(self.flat_set)
        self.lines_match = set_matcher(self.lines_set)


def _build_set(rules: list[Rule], *, lines: bool) -> Any:
    if not rules:
        return None
    import re2

    matcher = re2.Set.SearchSet(re2_options())
    for rule in rules:
        assert rule.pattern is not None
        matcher.Add(("(?m)" if lines else "") + rule.pattern)
    matcher.Compile()
    return matcher


def set_matcher(matcher: Any) -> Callable[[bytes], list[int]] | None:
    """`matcher.Match` (an re2.Set) over UTF-8 bytes, as a list: the wrapper's own method
    costs a Python frame and a type test per call, so its compiled set is called directly
    where the wrapper has one, and the wrapper's method otherwise."""
    if matcher is None:
        return None
    inner = getattr(matcher, "_set", None)
    if inner is None or not callable(getattr(inner, "Match", None)):
        return lambda data: matcher.Match(data) or []
    return inner.Match


@dataclass
class ScanResult:
    hits: list[Rule] = field(default_factory=list)
    excerpts: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False


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
    compiled: CompiledRules,
    deadline: float | None,
    *,
    window: int = WINDOW,
) -> ScanResult:
    result = ScanResult()
    found: set[str] = set()
    for rule in compiled.signal_rules if prepared.signals else ():
        if rule.signal in prepared.signals:
            found.add(rule.id)
            result.hits.append(rule)
            result.excerpts[rule.id] = f"signal:{rule.signal}"
    for segment in prepared.segments:
        if segment.kind == "lines":
            rules, matcher = compiled.lines, compiled.lines_match
        else:
            rules, matcher = compiled.flat, compiled.flat_match
        if matcher is None or not segment.text:
            continue
        if not _scan_segment(segment, rules, matcher, deadline, window, found, result):
            result.timed_out = True
            return result
    return result


def _scan_segment(
    segment: Segment,
    rules: list[Rule],
    matcher: Callable[[bytes], list[int]],
    deadline: float | None,
    window: int,
    found: set[str],
    result: ScanResult,
) -> bool:
    """Scan one segment; False when the deadline passed before it was done."""
    text = segment.text
    for start, end in windows(len(text), window) if len(text) > window else ((0, len(text)),):
        if deadline is not None and time.perf_counter() > deadline:
            return False
        # The bytes the wrapper would pass (strict UTF-8: a lone surrogate raises, as before).
        for index in matcher(text[start:end].encode("utf-8")):
            rule = rules[index]
            if rule.id in found or (
                rule.segments is not None and segment.kind not in rule.segments
            ):
                continue
            # Confirm against the whole text: the set saw a slice, whose edges look like the
            # start and end of the text to \b and ^. A match cut by the window's end is seen
            # whole by the next window, which starts OVERLAP characters earlier.
            match = rule.regex.search(text, start, end)
            if match is None or (match.end() == end and end != len(text)):
                continue
            found.add(rule.id)
            result.hits.append(rule)
            result.excerpts[rule.id] = match.group()[:EXCERPT_CHARS]
    return True
