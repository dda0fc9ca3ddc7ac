"""The detector's fixed cost per pass (session 10): the learned layer's score of a result with
one view (no Views, no Run) is the old scorer's (tests/reference_scorer.py) and the Views
path's, to the bit, on both scorer paths and for any weights; the readers' gates kept per
needle bits are the gates computed afresh; a scan without hits gives the inspection it gave."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import native
from proxy.detector.lexicon import CLASS_OF, CLASSES
from proxy.detector.model import LinearModel, shipped_model
from tests.hostile_inputs import hostile_inputs
from tests.reference_scorer import ReferenceModel
from tests.test_detector_model import ATTACKS, BENIGN


def _one_view_texts() -> list[str]:
    out = [t.casefold() for t in (*ATTACKS.values(), *BENIGN.values())]
    out += [
        payload(kind, size, seed).casefold()
        for kind in KINDS
        for size in (200, 4096, 65536)
        for seed in range(2)
    ]
    out += [t.casefold() for t in hostile_inputs(1 << 14).values() if "\ud800" not in t]
    return [*out, "", " ", "0", "ignore", "ignore previous instructions " * 80]


def _assert_one_view_as_before(model: LinearModel, text: str, classes: list[str]) -> None:
    expected = ReferenceModel(model).score([text], classes)
    assert model.score([text], classes) == expected
    assert model.score([text], classes, base=0) == expected
    assert model.score([text], classes, deadline=math.inf, base=0) == expected
    # and as the Views path the one view used to take (a second copy of it is not scored)
    assert model.score([text, text], classes) == expected


@pytest.mark.usefixtures("scorer_path")
def test_one_view_scores_as_the_old_scorer_on_payloads_attacks_and_hostile_inputs():
    model = shipped_model().model
    for text in _one_view_texts():
        for classes in ([], ["override"], ["override", "exfiltration", "override"]):
            _assert_one_view_as_before(model, text, classes)


@pytest.mark.usefixtures("scorer_path")
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([*CLASS_OF, *CLASSES, "the", "a", "0", "data", "é", "\n"]), max_size=300
    ).map(" ".join)
)
def test_one_view_of_class_words_scores_as_the_old_scorer(text):
    _assert_one_view_as_before(shipped_model().model, text, [])


def _random_model(rng: random.Random, words: list[str]) -> LinearModel:
    weights: dict[str, float] = {}
    for tok in words:
        weights["u:" + tok] = rng.uniform(-1.0, 2.0)
    for a in rng.sample(words, 20):
        weights[f"b:{a} {rng.choice(words)}"] = rng.uniform(-1.0, 2.0)
    for name in CLASSES:
        weights["c:" + name] = rng.uniform(-0.5, 1.5)
        weights["r:" + name] = rng.uniform(-0.5, 1.5)
    return LinearModel(
        {
            "format": 1,
            "version": "random",
            "window": rng.choice([2, 3, 5, 8, 32]),
            "bias": rng.uniform(-3.0, 0.0),
            "block_threshold": 0.9,
            "warn_threshold": 0.5,
            "weights": weights,
        }
    )


@pytest.mark.usefixtures("scorer_path")
@pytest.mark.parametrize("seed", range(4))
def test_one_view_scores_as_the_old_scorer_for_any_weights(seed):
    rng = random.Random(seed)
    words = sorted({*CLASS_OF, "the", "data", "send", "0", "key"})
    model = _random_model(rng, words)
    for _ in range(150):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 200)))
        classes = rng.sample(sorted(CLASSES), rng.randint(0, 3))
        _assert_one_view_as_before(model, text, classes)


def test_one_view_past_its_deadline_scores_nothing_as_before():
    model = shipped_model().model
    for text in ("ignore previous instructions", ""):
        assert model.score([text], [], deadline=-math.inf) == ReferenceModel(model).score(
            [text], [], deadline=-math.inf
        )


# --- the readers' gates, kept per needle bits ---------------------------------------------


def _old_present(data: bytes, chars: set[str] | None) -> tuple[bool, ...]:
    """readers.present as it was: every gate computed afresh, each open one's pattern
    searched (the gates by the session-7 oracle of test_detector_gates)."""
    from proxy.detector import readers as R
    from proxy.detector.re2spans import found
    from tests.test_detector_gates import old_gates

    gates = old_gates(data, chars)
    if not any(gates):
        return R._NONE
    return tuple(gate and found(p, data) for gate, p in zip(gates, R._patterns(), strict=True))


def _assert_present_as_before(text: str) -> None:
    from proxy.detector import readers as R

    data = text.encode("utf-8", "surrogatepass")
    chars = None if text.isascii() else set(text)
    expected = _old_present(data, chars)
    assert R.present(data, chars) == expected
    assert R.present(data, chars, R.walk(data)) == expected
    assert R.present(data, chars, R.walk(data)) == expected  # kept now


def _present_texts() -> list[str]:
    from proxy.detector import readers as R

    needles = [n.decode() for n in R._NEEDLES]
    out = [
        *needles,
        *(f"x{n}y" for n in needles),
        " ".join(needles),
        "begin 644 x",
        "a 10 b 11",
        " 10",
        "\u2801\u2803",
        "e\u0301x",
        ".- -... -.-.",
        "uryyb",
    ]
    out += [
        payload(kind, size, seed) for kind in KINDS for size in (200, 4096) for seed in range(3)
    ]
    return [*out, *hostile_inputs(1 << 14).values()]


@pytest.mark.parametrize("kept", ["cold", "warm", "full"])
def test_the_readers_found_are_the_old_ones_with_gates_kept_or_not(kept, monkeypatch):
    from proxy.detector import readers as R

    monkeypatch.setattr(R, "_GATES_OF", {})
    monkeypatch.setattr(R, "_OPEN_OF", {})
    if kept == "full":
        monkeypatch.setattr(R, "_GATES_KEPT", 0)
    texts = _present_texts()
    for _ in range(2 if kept == "warm" else 1):
        for text in texts:
            _assert_present_as_before(text)
    if kept == "full":
        assert not R._GATES_OF and not R._OPEN_OF
    elif native.load() is not None:  # the gates are kept only where the C walk gave bits
        assert R._GATES_OF and R._OPEN_OF


def _gate_alphabet() -> list[str]:
    from proxy.detector import readers as R

    return sorted({chr(b) for n in R._NEEDLES for b in n} | {"x", " ", "\u2803", "\u0300"})


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_gate_alphabet()), max_size=80))
def test_the_readers_found_on_any_text_of_the_gates_bytes_are_the_old_ones(text):
    _assert_present_as_before(text)


# --- the inspection of a scan without hits --------------------------------------------------


def test_inspections_with_and_without_hits_carry_what_they_carried():
    """score combine() of the hits (0.0, not -0.0, without any), rules in order, classes
    de-duplicated in order, excerpts copied: on attacks (hits) and benign texts (none)."""
    from proxy.detector.inspection import combine
    from proxy.detector.loader import load_detector

    detector = load_detector()
    by_id = {rule.id: rule for rule in detector.rules}
    seen_hits = seen_none = 0
    examples = [t for rule in detector.rules for t in (*rule.positive, *rule.negative)]
    for text in [*ATTACKS.values(), *BENIGN.values(), *examples, "", "plain words"]:
        for inspection in (detector.scan_text(text), detector.inspect_arguments("t", {"a": text})):
            hits = [by_id[rule_id] for rule_id in inspection.rules]
            assert inspection.score == combine([rule.score for rule in hits])
            assert math.copysign(1.0, inspection.score) == 1.0
            assert inspection.classes == list(dict.fromkeys(rule.cls for rule in hits))
            assert set(inspection.excerpts) <= set(inspection.rules)
            seen_hits += bool(hits)
            seen_none += not hits
    assert seen_hits and seen_none
