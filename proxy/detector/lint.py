"""`gatewatch rules lint`: validate rule packs, run their examples, probe patterns for ReDoS.

Loading already rejects malformed packs and statically unsafe patterns (redos.py). The linter
adds what loading does not: every rule's positive examples must fire and its negative examples
must not, through the same normalisation the proxy uses, and every pattern is timed against
a long run of its own near-misses (the input most likely to make it backtrack). --strict also
requires a known class, a description and at least two positive examples.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from proxy.detector.errors import PackError
from proxy.detector.normalize import prepare
from proxy.detector.rules import CLASSES, Rule, expand_paths, load_pack
from proxy.detector.scanner import scan

PROBE_CHARS = 100_000
PROBE_LIMIT_S = 0.25  # a linear pattern scans 100 KB in well under a millisecond or so


@dataclass(frozen=True)
class LintIssue:
    path: Path
    line: int
    message: str
    level: str = "error"  # error | warning

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.level}: {self.message}"


def rule_fires(rule: Rule, text: str) -> bool:
    """Whether `rule` fires on `text` after the normalisation its scope uses."""
    prepared = prepare(text, markup="result" in rule.scope)
    return bool(scan(prepared, [rule], None).hits)


def lint_paths(paths: list[Path], *, strict: bool = False) -> tuple[list[LintIssue], int]:
    """Problems found in the packs at `paths` and the number of rules checked."""
    issues: list[LintIssue] = []
    seen: dict[str, Rule] = {}
    count = 0
    for path in expand_paths(paths):
        try:
            rules = load_pack(path)
        except PackError as exc:
            issues.append(LintIssue(exc.path, exc.line, exc.reason))
            continue
        for rule in rules:
            count += 1
            if rule.id in seen:
                first = seen[rule.id]
                issues.append(
                    LintIssue(
                        path,
                        rule.line,
                        f"rule {rule.id!r} is already defined in {first.path}:{first.line}",
                    )
                )
            seen[rule.id] = rule
            issues.extend(lint_rule(rule, strict=strict))
    return issues, count


def lint_rule(rule: Rule, *, strict: bool = False) -> list[LintIssue]:
    issues: list[LintIssue] = []

    def add(message: str, level: str = "error") -> None:
        issues.append(LintIssue(rule.path, rule.line, f"rule {rule.id!r}: {message}", level))

    if not rule.positive:
        add("needs at least one positive example (text it must catch)")
    if not rule.negative:
        add("needs at least one negative example (similar text it must let through)")
    for example in rule.positive:
        if not rule_fires(rule, example):
            add(f"positive example does not fire: {example!r}")
    for example in rule.negative:
        if rule_fires(rule, example):
            add(f"negative example fires: {example!r}")
    if rule.cls not in CLASSES:
        add(
            f"unknown class {rule.cls!r}; known: {', '.join(sorted(CLASSES))}",
            "error" if strict else "warning",
        )
    if strict and not rule.description:
        add("needs a description")
    if strict and len(rule.positive) < 2:
        add("needs at least two positive examples")
    if not rule.id.startswith(rule.cls + ".") and strict:
        add(f"id should start with its class ({rule.cls}.)")
    if rule.regex is not None:
        slow = _probe(rule)
        if slow is not None:
            add(
                f"pattern is slow on repeated near-matches ({slow * 1000:.0f} ms for "
                f"{PROBE_CHARS // 1000} KB); tighten its gaps"
            )
    return issues


def _probe(rule: Rule) -> float | None:
    """Time the pattern on its positive examples, each cut short and repeated to 100 KB."""
    assert rule.regex is not None
    worst = 0.0
    for example in rule.positive or ("a",):
        folded = " ".join(example.casefold().split())
        for seed in (folded[:-1], folded.replace(".", " ")):
            if not seed:
                continue
            text = (seed + " ") * (PROBE_CHARS // (len(seed) + 1) + 1)
            started = time.perf_counter()
            rule.regex.search(text[:PROBE_CHARS].replace(folded, folded[:-1]))
            worst = max(worst, time.perf_counter() - started)
    return worst if worst > PROBE_LIMIT_S else None
