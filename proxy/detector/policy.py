"""The detector policy: what a scan's score and hits mean (pass, warn or block).

packs/detector-policy.yaml holds one section per mode (`default`, `paranoid`):

    modes:
      default:
        time_budget_ms: 250      # per frame; past it the frame goes on with `on_timeout`
        on_timeout: warn         # warn | block
        rules:                   # first match wins
          - name: block_high_score
            when: {direction: s2c, score_gte: 0.8}
            verdict: block
        default: pass

`when` keys (all must hold): direction (s2c | c2s, or a list), method (name or list),
score_gte, score_lt, rules_any (rule ids or fnmatch globs such as `shell.*`), classes_any,
severity_gte (low..critical), classifier (labels, e.g. [injection]), model (labels of the
learned layer: injection | suspicious | benign), min_hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from proxy.detector.errors import PackError
from proxy.detector.rules import SEVERITIES, Rule
from proxy.yaml_lines import LineDict, read_yaml

Verdict = Literal["pass", "warn", "block"]
_NO_HITS_KEPT = 256
VERDICTS: tuple[Verdict, ...] = ("pass", "warn", "block")
MODES = ("default", "paranoid")
DIRECTIONS = frozenset({"s2c", "c2s"})
MODEL_LABELS = frozenset({"injection", "suspicious", "benign"})
_WHEN_KEYS = frozenset(
    {
        "direction",
        "method",
        "score_gte",
        "score_lt",
        "rules_any",
        "classes_any",
        "severity_gte",
        "classifier",
        "model",
        "min_hits",
    }
)


def stricter(a: Verdict, b: Verdict) -> Verdict:
    return a if VERDICTS.index(a) >= VERDICTS.index(b) else b


@dataclass(frozen=True)
class PolicyRule:
    name: str
    verdict: Verdict
    direction: frozenset[str] | None = None
    methods: frozenset[str] | None = None
    score_gte: float | None = None
    score_lt: float | None = None
    rules_any: tuple[str, ...] | None = None
    classes_any: frozenset[str] | None = None
    severity_gte: int | None = None
    classifier: frozenset[str] | None = None
    model: frozenset[str] | None = None  # labels of the learned layer
    min_hits: int | None = None

    @property
    def layer(self) -> str:
        """Which layer's evidence this rule decides on, for explanations."""
        if self.model is not None:
            return "model"
        if self.classifier is not None:
            return "classifier"
        return "rules"

    def matches(
        self,
        *,
        direction: str,
        method: str | None,
        score: float,
        hits: list[Rule],
        classifier_label: str | None,
        model_label: str | None = None,
    ) -> bool:
        if self.direction is not None and direction not in self.direction:
            return False
        if self.methods is not None and method not in self.methods:
            return False
        if self.score_gte is not None and score < self.score_gte:
            return False
        if self.score_lt is not None and score >= self.score_lt:
            return False
        if self.min_hits is not None and len(hits) < self.min_hits:
            return False
        if self.rules_any is not None and not any(
            fnmatchcase(hit.id, glob) for hit in hits for glob in self.rules_any
        ):
            return False
        if self.classes_any is not None and not any(hit.cls in self.classes_any for hit in hits):
            return False
        if self.severity_gte is not None and not any(
            hit.severity_rank >= self.severity_gte for hit in hits
        ):
            return False
        if self.model is not None and model_label not in self.model:
            return False
        return self.classifier is None or classifier_label in self.classifier


@dataclass(frozen=True)
class Policy:
    mode: str
    time_budget_ms: float
    on_timeout: Verdict
    rules: tuple[PolicyRule, ...]
    default: Verdict
    # Per direction, the rules that can hold for it, in order: a rule limited to other
    # directions never matches (PolicyRule.matches checks the direction first).
    _by_direction: dict[str, tuple[PolicyRule, ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    # Verdicts of scans with no rule hit, by (direction, method, score, classifier, model):
    # most scans are such, and their verdict depends on nothing else.
    _no_hits: dict[tuple[str, str | None, float, str | None, str | None], tuple[Verdict, str]] = (
        field(init=False, repr=False, compare=False, default_factory=dict)
    )

    def __post_init__(self) -> None:
        for direction in ("s2c", "c2s"):
            self._by_direction[direction] = tuple(
                r for r in self.rules if r.direction is None or direction in r.direction
            )

    def decide(
        self,
        *,
        direction: str,
        method: str | None,
        score: float,
        hits: list[Rule],
        classifier_label: str | None = None,
        model_label: str | None = None,
    ) -> tuple[Verdict, str]:
        """The verdict and the name of the policy rule that gave it ('default' if none did)."""
        if hits:
            return self._first(direction, method, score, hits, classifier_label, model_label)
        key = (direction, method, score, classifier_label, model_label)
        found = self._no_hits.get(key)
        if found is None:
            found = self._first(direction, method, score, hits, classifier_label, model_label)
            if len(self._no_hits) < _NO_HITS_KEPT:  # methods and scores come from outside
                self._no_hits[key] = found
        return found

    def _first(
        self,
        direction: str,
        method: str | None,
        score: float,
        hits: list[Rule],
        classifier_label: str | None,
        model_label: str | None,
    ) -> tuple[Verdict, str]:
        for rule in self._by_direction.get(direction, self.rules):
            if rule.matches(
                direction=direction,
                method=method,
                score=score,
                hits=hits,
                classifier_label=classifier_label,
                model_label=model_label,
            ):
                return rule.verdict, rule.name
        return self.default, "default"


def builtin_policy_path() -> Path:
    from proxy.paths import packs_dir

    return packs_dir() / "detector-policy.yaml"


def load_policy(path: Path, mode: str) -> Policy:
    data = read_yaml(path, error=PackError)
    if not isinstance(data, LineDict) or not isinstance(data.get("modes"), LineDict):
        raise PackError(path, 1, "a detector policy is a mapping with a `modes:` mapping")
    if data.get("version", 1) != 1:
        raise PackError(
            path, data.line_of("version"), "unsupported `version`; this Gatewatch reads version 1"
        )
    modes: LineDict = data["modes"]
    if mode not in modes:
        raise PackError(
            path, modes.line, f"mode {mode!r} is not defined; defined: {', '.join(modes)}"
        )
    section = modes[mode]
    if not isinstance(section, LineDict):
        raise PackError(path, modes.line_of(mode), f"mode {mode!r} must be a mapping")
    budget = section.get("time_budget_ms")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
        raise PackError(
            path,
            section.line_of("time_budget_ms"),
            "`time_budget_ms` must be a positive number of milliseconds",
        )
    on_timeout = section.get("on_timeout")
    if on_timeout not in ("warn", "block"):
        raise PackError(path, section.line_of("on_timeout"), "`on_timeout` must be warn or block")
    default = section.get("default", "pass")
    if default not in VERDICTS:
        raise PackError(path, section.line_of("default"), "`default` must be pass, warn or block")
    items = section.get("rules", [])
    if not isinstance(items, list):
        raise PackError(path, section.line_of("rules"), "`rules` must be a list")
    return Policy(
        mode=mode,
        time_budget_ms=float(budget),
        on_timeout=on_timeout,
        rules=tuple(parse_policy_rule(path, item) for item in items),
        default=default,
    )


def parse_policy_rule(path: Path, item: Any) -> PolicyRule:
    if not isinstance(item, LineDict):
        raise PackError(path, 0, "each policy rule must be a mapping with name, when, verdict")

    def fail(key: str, reason: str) -> PackError:
        return PackError(path, item.line_of(key), f"policy rule {item.get('name')!r}: {reason}")

    unknown = set(item) - {"name", "when", "verdict"}
    if unknown:
        raise fail(sorted(unknown)[0], "unknown key; a policy rule has name, when, verdict")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise fail("name", "`name` must be a non-empty string")
    verdict = item.get("verdict")
    if verdict not in VERDICTS:
        raise fail("verdict", "`verdict` must be pass, warn or block")
    when = item.get("when", LineDict())
    if not isinstance(when, dict):
        raise fail("when", "`when` must be a mapping")
    unknown = set(when) - _WHEN_KEYS
    if unknown:
        raise fail(
            "when",
            f"unknown condition {sorted(unknown)[0]!r}; known: {', '.join(sorted(_WHEN_KEYS))}",
        )

    def names(key: str, allowed: frozenset[str] | None = None) -> frozenset[str] | None:
        value = when.get(key)
        if value is None:
            return None
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail("when", f"`{key}` must be a name or a list of names")
        if allowed is not None and not set(value) <= allowed:
            raise fail("when", f"`{key}` must be among {', '.join(sorted(allowed))}")
        return frozenset(value)

    def number(key: str) -> float | None:
        value = when.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise fail("when", f"`{key}` must be a number from 0 to 1")
        return float(value)

    severity = when.get("severity_gte")
    if severity is not None and severity not in SEVERITIES:
        raise fail("when", f"`severity_gte` must be one of {', '.join(SEVERITIES)}")
    min_hits = when.get("min_hits")
    if min_hits is not None and (
        isinstance(min_hits, bool) or not isinstance(min_hits, int) or min_hits < 1
    ):
        raise fail("when", "`min_hits` must be a positive whole number")
    rules_any = names("rules_any")
    return PolicyRule(
        name=name,
        verdict=verdict,
        direction=names("direction", DIRECTIONS),
        methods=names("method"),
        score_gte=number("score_gte"),
        score_lt=number("score_lt"),
        rules_any=tuple(sorted(rules_any)) if rules_any is not None else None,
        classes_any=names("classes_any"),
        severity_gte=SEVERITIES.index(severity) if severity is not None else None,
        classifier=names("classifier"),
        model=names("model", MODEL_LABELS),
        min_hits=min_hits,
    )
