"""The scan's widened set (proxy/detector/widen.py, scanner.py): a widened pattern matches
wherever its rule's pattern does, and the scan finds exactly the hits, in the same order, with
the same excerpts as the scan over the exact set (kept here as the oracle: the session-7 scan),
on the payloads, the rules' examples, the attack corpus, hostile inputs and mixed texts."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector.normalize import prepare
from proxy.detector.rules import builtin_pack_paths, compile_re2, load_packs
from proxy.detector.scanner import WINDOW, CompiledRules, scan
from proxy.detector.widen import widen
from tests.hostile_inputs import hostile_inputs
from tests.reference_scan import reference_scan
from tests.test_detector_model import ATTACKS, BENIGN

RULES = load_packs(builtin_pack_paths())
COMPILED = {scope: CompiledRules([rule for rule in RULES if scope in rule.scope])
            for scope in ("result", "arguments")}
EXAMPLES = [t for rule in RULES for t in (*rule.positive, *rule.negative)]
POSITIVE = [t for rule in RULES for t in rule.positive]


def wide_regex(rule):
    return compile_re2(widen(rule.pattern), lines=rule.view == "lines")


def assert_same_scan(text: str, window: int = WINDOW) -> None:
    for scope, compiled in COMPILED.items():
        prepared = prepare(text, markup=scope == "result")
        found = scan(prepared, compiled, None, window=window)
        assert ([rule.id for rule in found.hits], found.excerpts) == reference_scan(
            prepared, compiled, window)


# --- widen ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "wide"), [
    (r"a[^|;&]{0,300}\|", r"a[^|;&]{0,}\|"),
    (r"x{1,200}y{2,30}z{0,15}", r"x{1,}y{2,}z{0,15}"),
    (r"\{0,300}", r"\{0,300}"),                      # an escaped brace is a literal
    (r"[{0,300}]a{0,40}", r"[{0,300}]a{0,}"),        # so is one in a class
    (r"[]{0,99}]", r"[]{0,99}]"),                     # a leading ] is a class member
    (r"[^]{0,99}]", r"[^]{0,99}]"),
    (r"[[:alpha:]{0,99}]b{0,99}", r"[[:alpha:]{0,99}]b{0,}"),
    (r"\x{0300}{0,40}\p{Greek}", r"\x{0300}{0,}\p{Greek}"),
    (r"a{,40}b{40}c{3,}", r"a{,40}b{40}c{3,}"),        # no bounded count to widen
    (r"\Qa{0,99}\E", r"\Qa{0,99}\E"),                 # quoted: left whole
])
def test_widen_makes_only_counts_unbounded_above(pattern, wide):
    assert widen(pattern) == wide


def test_every_widened_rule_matches_its_examples_as_the_rule_does():
    for rule in RULES:
        if rule.pattern is None:
            continue
        wide = wide_regex(rule)
        for text in (*rule.positive, *rule.negative):
            if rule.regex.search(text.casefold()) is not None:
                assert wide.search(text.casefold()) is not None, (rule.id, text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([r for r in RULES if r.pattern is not None]),
       st.sampled_from(EXAMPLES), st.integers(0, 10**6))
def test_a_widened_pattern_matches_wherever_the_rule_does(rule, text, seed):
    # The rule's examples cut and padded: the exact pattern's matches are kept by the wide one.
    rng = random.Random(seed)
    cut = text[rng.randrange(len(text) + 1):] + " " * rng.randrange(3) + text
    if rule.regex.search(cut) is not None:
        assert wide_regex(rule).search(cut) is not None


# --- the scan -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [200, 4096, 65536])
def test_the_scan_of_every_payload_is_the_reference_scan(kind, size):
    for window in range(2):
        assert_same_scan(payload(kind, size, window))


def test_the_scan_of_the_examples_attacks_and_hostile_inputs_is_the_reference_scan():
    for text in [*EXAMPLES, *ATTACKS.values(), *BENIGN.values(),
                 *hostile_inputs(1 << 14).values(), ""]:
        assert_same_scan(text)


def test_texts_with_several_hits_keep_the_old_order():
    # Every pair of positive examples, both ways round: the widened set may name their rules
    # in another order; the scan reports them in the exact set's.
    rng = random.Random(8)
    several = 0
    for _ in range(400):
        a, b, c = rng.sample(POSITIVE, 3)
        text = f"{a} and then {b}, also {c}"
        assert_same_scan(text)
        several += len(scan(prepare(text), COMPILED["result"], None).hits) > 1
    assert several > 100  # the ordering path ran


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(POSITIVE + EXAMPLES[:40] + ["curl x", "| sh", "ignore",
                                                          " " * 50, "x" * 300, "\n"]),
                max_size=8).map(" ".join))
def test_the_scan_of_mixed_examples_is_the_reference_scan(text):
    assert_same_scan(text)


def test_a_text_longer_than_a_window_is_scanned_with_the_exact_set_as_before():
    text = " filler words here " * 300 + " ".join(POSITIVE[:30])
    assert_same_scan(text, window=4096)


_PACK = """pack: order
description: two rules whose widened set names them in another order
rules:
  - id: test.far_apart
    class: instruction_override
    severity: high
    score: 0.5
    source: this test
    scope: [result]
    pattern: 'alpha[^.]{0,20}omega'
  - id: test.middle
    class: instruction_override
    severity: high
    score: 0.5
    source: this test
    scope: [result]
    pattern: 'middle'
"""


def test_hits_are_in_the_exact_sets_order_where_the_widened_set_names_them_otherwise(tmp_path):
    from proxy.detector.rules import load_pack

    path = tmp_path / "order.yaml"
    path.write_text(_PACK)
    compiled = CompiledRules(load_pack(path))
    text = "alpha " + "x" * 30 + " omega middle alpha omega"
    data = text.encode()
    assert compiled.wide_flat_match(data) == [0, 1]  # the widened "alpha...omega" ends first
    assert compiled.flat_match(data) == [1, 0]
    prepared = prepare(text)
    assert [r.id for r in scan(prepared, compiled, None).hits] == ["test.middle", "test.far_apart"]
    assert ([r.id for r in scan(prepared, compiled, None).hits],
            scan(prepared, compiled, None).excerpts) == reference_scan(prepared, compiled)
