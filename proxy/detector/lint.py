"""`gatewatch rules lint`: validate rule packs, run their examples, probe patterns for ReDoS.

Loading already rejects malformed packs, patterns RE2 cannot compile and the shapes redos.py
calls unsafe (nested or unbounded quantifiers, ambiguous repeated alternations, backreferences).
The linter adds what loading does not: every rule's positive examples must fire and its negative
examples must not, through the same normalisation the proxy uses. --strict also requires a
known class, a description and at least two positive examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proxy.detector.errors import PackError
from proxy.detector.normalize import prepare
from proxy.detector.rules import CLASSES, Rule, expand_paths, load_pack
from proxy.detector.scanner import CompiledRules, scan


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
    return bool(scan(prepared, CompiledRules([rule]), None).hits)


def lint_paths(paths: list[Path], *, strict: bool = False) -> tuple[list[LintIssue], int]:
    """Problems found in the packs at `paths` and the number of rules checked."""
    issues: list[LintIssue] = []
    seen: dict[str, Rule] = {}
    count = 0
    for path in expand_paths(paths):
        try:
            rules = load_pack(path)
        except PackError as exc:
            issues.append(LintIssue(exc.path or path, exc.line, exc.reason))
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
    return issues
