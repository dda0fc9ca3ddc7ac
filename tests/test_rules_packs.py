"""The built-in rule packs: coverage, examples, and what loading does with a malformed pack."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from proxy.detector import PackError
from proxy.detector.lint import lint_paths, rule_fires
from proxy.detector.redos import pattern_problems
from proxy.detector.rules import CLASSES, builtin_pack_paths, load_pack, load_packs

RULES = load_packs(builtin_pack_paths())


def test_built_in_packs_have_at_least_forty_rules_across_the_classes():
    assert len(RULES) >= 40
    per_class = Counter(rule.cls for rule in RULES)
    assert set(per_class) == CLASSES
    assert all(rule.source and rule.description for rule in RULES)


def test_built_in_packs_lint_clean_in_strict_mode():
    issues, count = lint_paths(builtin_pack_paths(), strict=True)
    assert count == len(RULES)
    assert [str(issue) for issue in issues] == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_rule_fires_on_its_positives_and_not_on_its_negatives(rule):
    assert rule.positive and rule.negative
    for text in rule.positive:
        assert rule_fires(rule, text), text
    for text in rule.negative:
        assert not rule_fires(rule, text), text


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pack.yaml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD_RULE = """\
pack: mine
rules:
  - id: role_hijack.mine
    class: role_hijack
    severity: high
    score: 0.8
    source: test
    pattern: 'obey the tide'
    examples: {positive: ["Obey the tide"], negative: ["the tide"]}
"""


def test_a_good_pack_loads(tmp_path):
    (rule,) = load_pack(write(tmp_path, GOOD_RULE))
    assert rule.id == "role_hijack.mine" and rule.line == 3


@pytest.mark.parametrize(
    ("change", "line", "words"),
    [
        (("score: 0.8", "score: 2"), 6, "score"),
        (("severity: high", "severity: severe"), 5, "severity"),
        (("'obey the tide'", "'obey.*tide'"), 8, "unbounded quantifier"),
        (("'obey the tide'", "'(?:a{1,5}){1,9}'"), 8, "nested quantifier"),
        (("'obey the tide'", "'(?:ab|a){1,9}c'"), 8, "alternation inside a repeated group"),
        (("'obey the tide'", "'Obey'"), 8, "upper-case"),
        (("'obey the tide'", "'obey ('"), 8, "does not compile"),
        (("    source: test\n", ""), 3, "source"),
        (("class: role_hijack", "class: role_hijack\n    colour: red"), 5, "unknown field"),
        (("id: role_hijack.mine", "id: Mine"), 3, "id"),
    ],
)
def test_malformed_packs_raise_with_file_line_and_reason(tmp_path, change, line, words):
    path = write(tmp_path, GOOD_RULE.replace(*change))
    with pytest.raises(PackError) as caught:
        load_pack(path)
    assert caught.value.path == path
    assert caught.value.line == line
    assert words in caught.value.reason
    assert str(caught.value).startswith(f"{path}:{line}: ")


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, GOOD_RULE.replace("score: 0.8", "score: [0.8"))
    with pytest.raises(PackError) as caught:
        load_pack(path)
    assert caught.value.line >= 6 and "YAML" in caught.value.reason


def test_duplicate_rule_ids_across_packs_are_refused(tmp_path):
    first = write(tmp_path, GOOD_RULE)
    second = tmp_path / "again.yaml"
    second.write_text(GOOD_RULE, encoding="utf-8")
    with pytest.raises(PackError, match="already defined"):
        load_packs([first, second])


def test_linter_reports_examples_that_do_not_behave(tmp_path):
    path = write(
        tmp_path, GOOD_RULE.replace('negative: ["the tide"]', 'negative: ["obey the tide!"]')
    )
    issues, _ = lint_paths([path])
    assert len(issues) == 1 and "negative example fires" in issues[0].message
    assert issues[0].line == 3


@pytest.mark.parametrize(
    "pattern",
    ["(a+)+b", "(a|aa){1,30}b", "(a?){25}a{25}", r"(\w)\1", "a.{0,99}b.{0,99}c.{0,99}d", "x?",
     r"(?:[^.]|[^,]x){0,40}b", r"(?:[a-f]|[d-z]x){0,40}b", r"(?:\s|\.x){0,40}b",
     r"(?:[^.]|\.[^\s.]|[^,]){0,40}b", r"(?i:ab|Ab){0,30}c", r"(?i)(?:ab|Ab){0,30}c",
     r"(?si)(?:ab|Ab){0,30}c"],
)
def test_redos_check_rejects_catastrophic_shapes(pattern):
    assert pattern_problems(pattern)


@pytest.mark.parametrize(
    "pattern",
    [r"\bignore\b[^.]{0,30}?\bprevious\b", r"(?:\.\./){3,12}", r"https?://\S{1,200} and",
     r"\bsend (?:[^.;]|\.[^\s.;]){0,40}?\bkeys\b", r"(?:[a-c]|d[a-z]|e){0,9}x"],
)
def test_redos_check_accepts_bounded_linear_patterns(pattern):
    assert pattern_problems(pattern) == []


@pytest.mark.parametrize("lazy", ["", "?"])
def test_an_optional_gap_costs_what_the_same_two_alternatives_cost(lazy):
    # `(?:X)?Y` matches what `Y|XY` matches; the linter must not price it higher, or a rule
    # has to spell Y twice to pass.
    gap, then = r"\bai\b[^!?]{0,90}?\bsend\b[^.]{0,90}?", r"\bkeys?\b[^.]{0,90}?\bnow\b"
    assert _cost_of(f"(?:{gap}){lazy}?{then}") == _cost_of(f"(?:{then}|{gap}{then})")
    folded, spelled = f"x(?:{gap}){lazy}?{then}", f"x(?:{then}|{gap}{then})"
    assert pattern_problems(folded) == pattern_problems(spelled)
    # ... while a repeat that can be taken twice or more still multiplies.
    assert _cost_of(f"(?:{gap}){{0,2}}{then}") > _cost_of(f"(?:{then}|{gap}{then})")


def _cost_of(pattern: str) -> int:
    from proxy.detector.redos import _cost, sre_parse

    return _cost(list(sre_parse.parse(pattern)))


def test_only_safe_patterns_are_remembered(gw_home: Path, monkeypatch: pytest.MonkeyPatch):
    from proxy.detector import safe_patterns

    monkeypatch.setattr(safe_patterns, "_known", None)
    assert safe_patterns.checked_pattern_problems("obey the tide") == []
    assert safe_patterns.checked_pattern_problems("(a+)+") != []
    stored = (gw_home / "data" / "detector-safe-patterns").read_text().split()
    assert stored == [safe_patterns._key("obey the tide")]
    monkeypatch.setattr(safe_patterns, "_known", None)  # another process: answered from the file
    monkeypatch.setattr(safe_patterns, "pattern_problems", lambda p: ["checked again"])
    assert safe_patterns.checked_pattern_problems("obey the tide") == []
    assert safe_patterns.checked_pattern_problems("(a+)+") == ["checked again"]
