"""Match rules against prepared segments: one RE2 set pass per window, then confirm the hits.

RE2 matches in linear time, so no input can make a pattern backtrack; a set of all patterns is
searched in one pass and only the rules it reports are searched again for their match (the
excerpt). Long segments are searched in overlapping windows so the deadline is checked between
them (in the views made from the text; the text itself is read to the end). The overlap is at
least the widest match any rule can make (redos.MAX_MATCH_WIDTH), so a phrase that straddles a
window edge is still found whole in the next window.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from proxy.detector.normalize import Prepared, Segment
from proxy.detector.redos import MAX_MATCH_WIDTH
from proxy.detector.rules import Rule, re2_options
from proxy.detector.widen import widen

WINDOW = 256 * 1024
# The views a reader sees as written (the text, its lines, its comments, what a renderer hides,
# the attributes of its tags): matched to the end whatever the deadline, so padding a result
# past the budget cannot hide an order in it (the relay passes no frame too large to scan
# whole). What was decoded or respelled from them stops at the deadline.
READ_WHOLE = frozenset({"text", "lines", "comment", "hidden", "markup"})
# Views made from the text that were made before the deadline and are small (a decoded base64
# or hex chunk, not a respelled copy of the whole text) are matched past it too, up to a total:
# their making is paid, and an order encoded after a megabyte of padding is one of them.
LATE_VIEW = 64 * 1024
LATE_VIEWS = 1 << 20
OVERLAP = MAX_MATCH_WIDTH
EXCERPT_CHARS = 80


class CompiledRules:
    """Rules split by view, each group's patterns compiled into one RE2 set: with widened
    patterns (widen.py) for texts that fit one window, with the exact ones (compiled on
    first use) for longer texts and to order the hits of a window that has several."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.signal_rules = [rule for rule in rules if rule.signal is not None]
        self.flat = [rule for rule in rules if rule.regex is not None and rule.view == "flat"]
        self.lines = [rule for rule in rules if rule.regex is not None and rule.view == "lines"]
        self.wide_flat_match = set_matcher(_build_set(self.flat, lines=False, wide=True))
        self.wide_lines_match = set_matcher(_build_set(self.lines, lines=True, wide=True))

    @functools.cached_property
    def flat_set(self) -> Any:
        return _build_set(self.flat, lines=False)

    @functools.cached_property
    def lines_set(self) -> Any:
        return _build_set(self.lines, lines=True)

    @functools.cached_property
    def flat_match(self) -> Callable[[bytes], list[int]] | None:
        return set_matcher(self.flat_set)

    @functools.cached_property
    def lines_match(self) -> Callable[[bytes], list[int]] | None:
        return set_matcher(self.lines_set)


def _build_set(rules: list[Rule], *, lines: bool, wide: bool = False) -> Any:
    if not rules:
        return None
    import re2

    matcher = re2.Set.SearchSet(re2_options())
    for rule in rules:
        assert rule.pattern is not None
        pattern = ("(?m)" if lines else "") + rule.pattern
        # A widened pattern RE2 refused (none of the packs' does) is used exact.
        if not wide or _adds(matcher, ("(?m)" if lines else "") + widen(rule.pattern)) < 0:
            matcher.Add(pattern)
    matcher.Compile()
    return matcher


def _adds(matcher: Any, pattern: str) -> int:
    """The index `pattern` got in `matcher`, or -1 where RE2 cannot compile it."""
    try:
        return int(matcher.Add(pattern))
    except Exception:  # re2.error, or ValueError from the wrapper
        return -1


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
    late = 0  # characters of small views matched past the deadline
    for segment in prepared.segments:
        lines = segment.kind == "lines"
        rules = compiled.lines if lines else compiled.flat
        if not rules or not segment.text:
            continue
        whole = segment.kind in READ_WHOLE
        # a small view already made (a decoded chunk) is matched whatever the time too
        if (not whole and late < LATE_VIEWS and len(segment.text) <= LATE_VIEW
                and deadline is not None and time.perf_counter() > deadline):
            late += len(segment.text)
            whole = True
        if result.timed_out and not whole:
            continue
        if not _scan_segment(segment, rules, compiled, lines, None if whole else deadline,
                             window, found, result):
            result.timed_out = True
    return result


def _scan_segment(
    segment: Segment,
    rules: list[Rule],
    compiled: CompiledRules,
    lines: bool,
    deadline: float | None,
    window: int,
    found: set[str],
    result: ScanResult,
) -> bool:
    """Scan one segment; False when the deadline passed before it was done."""
    text = segment.text
    if len(text) <= window:  # one window: the widened set, then each rule it names confirmed
        if deadline is not None and time.perf_counter() > deadline:
            return False
        wide = compiled.wide_lines_match if lines else compiled.wide_flat_match
        assert wide is not None
        data = text.encode("utf-8")  # strict, as the wrapper: a lone surrogate raises
        confirmed = [
            (index, rule, match) for index, rule, match in (
                (index, rules[index], _search(rules[index], segment, found, text, 0, len(text)))
                for index in wide(data)
            ) if match is not None
        ]
        if len(confirmed) > 1:
            # In the order the exact set names them (the order of the old scan): the order
            # a set names its rules in follows where their matches end, which a widened
            # pattern may move. Its rules are the confirmed ones, and more.
            exact = compiled.lines_match if lines else compiled.flat_match
            assert exact is not None
            rank = {index: at for at, index in enumerate(exact(data))}
            confirmed.sort(key=lambda hit: rank.get(hit[0], len(rank)))
        for _index, rule, match in confirmed:
            if rule.id in found:  # two rules of one id: the first named, as before
                continue
            found.add(rule.id)
            result.hits.append(rule)
            result.excerpts[rule.id] = match.group()[:EXCERPT_CHARS]
        return True
    matcher = compiled.lines_match if lines else compiled.flat_match
    assert matcher is not None
    for start, end in windows(len(text), window):
        if deadline is not None and time.perf_counter() > deadline:
            return False
        # The bytes the wrapper would pass (strict UTF-8: a lone surrogate raises, as before).
        for index in matcher(text[start:end].encode("utf-8")):
            rule = rules[index]
            # Confirm against the whole text: the set saw a slice, whose edges look like the
            # start and end of the text to \b and ^. A match cut by the window's end is seen
            # whole by the next window, which starts OVERLAP characters earlier.
            match = _search(rule, segment, found, text, start, end)
            if match is None:
                continue
            found.add(rule.id)
            result.hits.append(rule)
            result.excerpts[rule.id] = match.group()[:EXCERPT_CHARS]
    return True


def _search(
    rule: Rule, segment: Segment, found: set[str], text: str, start: int, end: int
) -> Any:
    """The rule's first match in text[start:end] where it is still to be found in this
    segment's kind, and not cut by the end of a window that is not the text's end."""
    if rule.id in found or (rule.segments is not None and segment.kind not in rule.segments):
        return None
    match = rule.regex.search(text, start, end)
    if match is None or (match.end() == end and end != len(text)):
        return None
    return match
