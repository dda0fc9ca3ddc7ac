"""The rule scan as it was before the widened set (session 7), kept as the oracle the scan's
fast paths are tested against: the exact RE2 set (through the wrapper's own Match) on every
window, each rule it names confirmed with its exact pattern, in the order the set names them."""

from __future__ import annotations

from typing import Any

from proxy.detector.scanner import EXCERPT_CHARS, WINDOW, windows


def reference_scan(prepared: Any, compiled: Any,
                   window: int = WINDOW) -> tuple[list[str], dict[str, str]]:
    """(rule ids hit, in order; their excerpts) of `prepared` under `compiled`."""
    hits: list[str] = []
    excerpts: dict[str, str] = {}
    for rule in compiled.signal_rules:
        if rule.signal in prepared.signals:
            hits.append(rule.id)
            excerpts[rule.id] = f"signal:{rule.signal}"
    for segment in prepared.segments:
        lines = segment.kind == "lines"
        rules = compiled.lines if lines else compiled.flat
        matcher = compiled.lines_set if lines else compiled.flat_set
        if matcher is None or not segment.text:
            continue
        text = segment.text
        for start, end in windows(len(text), window):
            for index in matcher.Match(text[start:end]) or ():
                rule = rules[index]
                if rule.id in hits or (rule.segments is not None
                                       and segment.kind not in rule.segments):
                    continue
                match = rule.regex.search(text, start, end)
                if match is None or (match.end() == end and end != len(text)):
                    continue
                hits.append(rule.id)
                excerpts[rule.id] = match.group()[:EXCERPT_CHARS]
    return hits, excerpts
