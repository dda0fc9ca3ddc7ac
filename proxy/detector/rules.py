"""Rule packs: YAML files under packs/rules/ that say what an injection looks like.

A pack is `{pack: NAME, description: TEXT, rules: [RULE, ...]}`; a rule is

    id: role_hijack.ignore_previous     # pack-qualified, unique across all packs
    class: role_hijack                  # one of CLASSES
    severity: high                      # low | medium | high | critical
    score: 0.9                          # 0 < score <= 1, evidence this rule adds
    source: "where the pattern is known from"
    description: "what it catches"
    pattern: 'regex over case-folded, whitespace-collapsed text'   # or:
    signal: unicode_tags                # a hiding technique reported by normalisation
    scope: [result]                     # result (tool output, descriptions) and/or arguments
    view: flat                          # flat (one line) | lines (line breaks kept)
    segments: [comment]                 # optional: only these views (text, comment, hidden, ...)
    examples: {positive: [...], negative: [...]}

Loading validates everything, including the ReDoS checks in redos.py, and raises PackError
with the file and line of the first problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.detector.errors import PackError
from proxy.detector.safe_patterns import checked_pattern_problems
from proxy.errors import InvalidValue
from proxy.yaml_lines import LineDict, read_yaml

CLASSES = frozenset(
    {
        "role_hijack",
        "fake_turn",
        "tool_coercion",
        "exfiltration",
        "secret_extraction",
        "hidden_instruction",
        "addressed_to_ai",
        "jailbreak",
        "shell",
        "path",
    }
)
SEVERITIES = ("low", "medium", "high", "critical")
SIGNALS = frozenset(
    {
        "unicode_tags",
        "variation_selector_payload",
        "bidi_control",
        "zero_width_in_words",
        "ansi_hiding",
        "css_hidden",
    }
)
SCOPES = frozenset({"result", "arguments"})
VIEWS = frozenset({"flat", "lines"})
SEGMENT_KINDS = frozenset({"text", "comment", "hidden", "decoded", "markup"})
_ID = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")
_FIELDS = frozenset(
    {
        "id",
        "class",
        "severity",
        "score",
        "source",
        "description",
        "pattern",
        "signal",
        "scope",
        "view",
        "segments",
        "examples",
    }
)


@dataclass(frozen=True)
class Rule:
    id: str
    cls: str
    severity: str
    score: float
    source: str
    description: str
    pattern: str | None
    signal: str | None
    scope: frozenset[str]
    view: str
    segments: frozenset[str] | None
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    path: Path
    line: int
    regex: Any  # a compiled RE2 pattern (linear time), None for signal rules

    @property
    def severity_rank(self) -> int:
        return SEVERITIES.index(self.severity)


def compile_re2(pattern: str, *, lines: bool = False) -> Any:
    """Compile with RE2, which matches in linear time; in the lines view `^`/`$` are line edges.

    Raises ValueError naming what RE2 does not support (lookarounds, backreferences).
    """
    import re2

    try:
        return re2.compile(("(?m)" if lines else "") + pattern, re2_options())
    except re2.error as exc:
        raise InvalidValue(
            f"RE2 cannot compile this pattern ({exc}); lookarounds and backreferences are not "
            "supported"
        ) from exc


def re2_options() -> Any:
    import re2

    options = re2.Options()
    options.max_mem = 64 << 20  # large alternations of phrases need more than the 8 MiB default
    return options


def builtin_pack_paths() -> list[Path]:
    from proxy.paths import packs_dir

    return sorted((packs_dir() / "rules").glob("*.yaml"))


def expand_paths(paths: list[Path]) -> list[Path]:
    """Files as given; directories become their *.yaml files, sorted."""
    out: list[Path] = []
    for path in paths:
        out.extend(sorted(path.glob("*.yaml")) if path.is_dir() else [path])
    return out


def load_packs(paths: list[Path]) -> list[Rule]:
    """Load and validate every pack; rule ids must be unique across all of them."""
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for path in expand_paths(paths):
        for rule in load_pack(path):
            if rule.id in seen:
                first = seen[rule.id]
                raise PackError(
                    path,
                    rule.line,
                    f"rule id {rule.id!r} is already defined in {first.path}:{first.line}; "
                    "rename one of them",
                )
            seen[rule.id] = rule
            rules.append(rule)
    return rules


def load_pack(path: Path) -> list[Rule]:
    data = read_yaml(path, error=PackError)
    if not isinstance(data, LineDict):
        raise PackError(path, 1, "a rule pack is a mapping with `pack:` and `rules:` keys")
    unknown = set(data) - {"pack", "description", "rules"}
    if unknown:
        key = sorted(unknown)[0]
        raise PackError(
            path, data.line_of(key), f"unknown key {key!r}; expected pack, description, rules"
        )
    if not isinstance(data.get("pack"), str) or not data["pack"].strip():
        raise PackError(path, data.line_of("pack"), "`pack:` must name the pack")
    items = data.get("rules")
    if not isinstance(items, list) or not items:
        raise PackError(path, data.line_of("rules"), "`rules:` must be a non-empty list")
    return [_rule(path, item, data.line_of("rules")) for item in items]


def _rule(path: Path, item: Any, list_line: int) -> Rule:
    if not isinstance(item, LineDict):
        raise PackError(path, list_line, "each entry under `rules:` must be a mapping")

    def fail(key: str, reason: str) -> PackError:
        rule_id = item.get("id")
        prefix = f"rule {rule_id!r}: " if isinstance(rule_id, str) else ""
        return PackError(path, item.line_of(key), prefix + reason)

    unknown = set(item) - _FIELDS
    if unknown:
        key = sorted(unknown)[0]
        raise fail(key, f"unknown field {key!r}; known fields: {', '.join(sorted(_FIELDS))}")
    rule_id = item.get("id")
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        raise fail("id", "`id` must look like `class.name` (lower case, dots, underscores)")
    cls = item.get("class")
    if not isinstance(cls, str) or not re.fullmatch(r"[a-z][a-z_]{1,40}", cls):
        raise fail("class", f"`class` must be a lower-case name such as {sorted(CLASSES)[0]}")
    severity = item.get("severity")
    if severity not in SEVERITIES:
        raise fail("severity", f"`severity` must be one of {', '.join(SEVERITIES)}")
    score = item.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 < score <= 1:
        raise fail("score", "`score` must be a number above 0 and at most 1")
    source = item.get("source")
    if not isinstance(source, str) or not source.strip():
        raise fail("source", "`source` must say where the pattern is known from")
    description = item.get("description", "")
    if not isinstance(description, str):
        raise fail("description", "`description` must be text")

    pattern = item.get("pattern")
    signal = item.get("signal")
    if (pattern is None) == (signal is None):
        raise fail("id", "give exactly one of `pattern` or `signal`")
    regex: Any = None
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern:
            raise fail("pattern", "`pattern` must be a non-empty string")
        problems = checked_pattern_problems(pattern)
        if problems:
            raise fail("pattern", "unsafe pattern: " + "; ".join(problems))
    elif signal not in SIGNALS:
        raise fail("signal", f"`signal` must be one of {', '.join(sorted(SIGNALS))}")

    scope = _name_set(item, "scope", SCOPES, fail) or frozenset({"result"})
    view = item.get("view", "flat")
    if view not in VIEWS:
        raise fail("view", "`view` must be flat or lines")
    if pattern is not None:
        try:
            regex = compile_re2(pattern, lines=view == "lines")
        except ValueError as exc:
            raise fail("pattern", str(exc)) from exc
    segments = _name_set(item, "segments", SEGMENT_KINDS, fail)
    if view == "lines" and segments is not None:
        raise fail("segments", "`segments` does not apply to `view: lines`")
    positive, negative = _examples(item, fail)
    return Rule(
        id=rule_id,
        cls=cls,
        severity=severity,
        score=float(score),
        source=source.strip(),
        description=description.strip(),
        pattern=pattern,
        signal=signal,
        scope=scope,
        view=view,
        segments=segments,
        positive=positive,
        negative=negative,
        path=path,
        line=item.line,
        regex=regex,
    )


def _name_set(
    item: LineDict, key: str, allowed: frozenset[str], fail: Any
) -> frozenset[str] | None:
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(v in allowed for v in value):
        raise fail(key, f"`{key}` must be a list of: {', '.join(sorted(allowed))}")
    return frozenset(value)


def _examples(item: LineDict, fail: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    examples = item.get("examples")
    if examples is None:
        return (), ()
    if not isinstance(examples, LineDict) or set(examples) - {"positive", "negative"}:
        raise fail("examples", "`examples` must be a mapping with `positive` and `negative` lists")
    out: list[tuple[str, ...]] = []
    for key in ("positive", "negative"):
        value = examples.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail("examples", f"`examples.{key}` must be a list of strings")
        out.append(tuple(value))
    return out[0], out[1]
