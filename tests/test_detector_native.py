"""The detector's C scorer (proxy/detector/_native.c) against its Python path and the old
scorer (tests/reference_scorer.py): the same floats to the last bit, the same best window,
the same runs kept for deriving views, for any weights; and the Python path wherever the
extension is not there or not wanted."""

from __future__ import annotations

import contextlib
import math
import os
import random
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import native, scoring
from proxy.detector.detector import model_views
from proxy.detector.lexicon import CLASS_OF, CLASSES
from proxy.detector.model import LinearModel, model_path, read_model, shipped_model, tokens
from proxy.detector.normalize import prepare
from proxy.detector.scoring import Run, Scorer
from tests.hostile_inputs import hostile_inputs
from tests.reference_scorer import ReferenceModel
from tests.reference_scorer import tokens as reference_tokens

ROOT = Path(__file__).resolve().parent.parent
built = pytest.mark.skipif(native.load() is None, reason="the C extension is not built here")


def python_path(model: LinearModel) -> Scorer:
    """The model's scorer with the C scorer taken out: the Python path."""
    scorer = Scorer(model, tokens)
    scorer.native = None
    scorer._windows_c = None
    return scorer


def bits(values: list[float]) -> list[str]:
    return [v.hex() for v in values]  # tells 0.0 from -0.0, unlike ==


def assert_same_run(mine: Run, theirs: Run) -> None:
    assert bits(mine.contrib) == bits(theirs.contrib)
    assert mine.best == theirs.best
    assert math.copysign(1.0, mine.best[0]) == math.copysign(1.0, theirs.best[0])
    assert mine.derivable == theirs.derivable
    assert bits(mine.unigram) == bits(theirs.unigram)
    assert bits(mine.pairs) == bits(theirs.pairs)
    assert mine.classes == theirs.classes
    assert (mine.skipped_u, mine.skipped_b, mine.skipped_c) == (
        theirs.skipped_u, theirs.skipped_b, theirs.skipped_c)


def test_ci_runs_the_c_scorer():
    """CI must test the C scorer, not fall back to the Python path unnoticed."""
    if os.environ.get("CI") != "true" or not native.wanted():
        pytest.skip("outside CI, or GATEWATCH_NATIVE=0")
    assert native.load() is not None, "the C extension did not build or load"
    assert shipped_model().model._scorer.native is not None


def test_gatewatch_native_0_forces_the_python_path(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")
    assert native.load() is None
    assert read_model(model_path())._scorer.native is None
    assert "Python path" in native.status()


@pytest.mark.parametrize("value", [None, "0", "1", "", " 0", "00", "off", "0\n"])
def test_gatewatch_native_is_read_as_os_environ_reads_it(monkeypatch, value):
    """wanted() reads the variable without os.environ.get (which raises and catches a
    KeyError when it is not set): the same answer, each time it changes."""
    if value is None:
        monkeypatch.delenv(native.ENV, raising=False)
    else:
        monkeypatch.setenv(native.ENV, value)
    assert native.wanted() is (os.environ.get(native.ENV, "1") != "0")


# A few words of every kind (class words, plain words, unknown ones) so every key recurs at
# every distance; weights from a small set so sums tie and windows tie.
_WORDS = ["ignore", "previous", "instructions", "you", "send", "password", "now", "system",
          "the", "data", "x", "y0", "unknown", "zz"]
_WEIGHTS = st.sampled_from([0.0, 0.5, 1.0, -1.0, 0.25, -0.5, 1e-17, 2.0, 0.1, -0.3, 3.7])


@st.composite
def models_and_tokens(draw: st.DrawFn) -> tuple[LinearModel, list[str]]:
    """A model over a few words and a token list of them: few words, so every key recurs,
    at every distance from the window (the chains' edge cases)."""
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5, unique=True))
    weights: dict[str, float] = {}
    for w in draw(st.lists(st.sampled_from(words), unique=True)):
        weights["u:" + w] = draw(_WEIGHTS)
    for a, b in draw(st.lists(st.tuples(st.sampled_from(words), st.sampled_from(words)),
                              unique=True, max_size=25)):
        weights[f"b:{a} {b}"] = draw(_WEIGHTS)
    names = sorted({CLASS_OF[w] for w in words if w in CLASS_OF}) or list(CLASSES)[:2]
    for name in draw(st.lists(st.sampled_from(names), unique=True)):
        weights["c:" + name] = draw(_WEIGHTS)
    for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)),
                              unique=True, max_size=25)):
        weights[f"k:{a}>{b}"] = draw(_WEIGHTS)
    model = LinearModel({"format": 1, "version": "h", "window": draw(st.integers(1, 9)),
                         "bias": -1.0, "block_threshold": 0.9, "warn_threshold": 0.5,
                         "weights": weights})
    return model, draw(st.lists(st.sampled_from(words), max_size=300))


@built
@settings(max_examples=400, deadline=None)
@given(models_and_tokens(), st.booleans())
def test_the_c_scorer_gives_the_python_scorers_runs_for_any_weights(found, keep):
    model, toks = found
    assert model._scorer.native is not None
    mine = model._scorer.full(toks, keep)
    assert_same_run(mine, python_path(model).full(toks, keep))
    reference = ReferenceModel(model)
    assert mine.contrib == reference.contributions(toks)
    assert mine.best == reference.best_window(toks)


@built
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e300, -1e300, 1e-300]),
                max_size=60),
       st.integers(1, 12))
def test_c_window_sums_are_the_python_window_sums(contrib, span):
    mine = native.load().windows(contrib, span)  # type: ignore[union-attr]
    expected = scoring.windows(contrib, span)
    assert mine == expected
    assert math.copysign(1.0, mine[0]) == math.copysign(1.0, expected[0])


@built
def test_window_sums_that_overflow_are_left_to_the_python_path():
    scorer = shipped_model().model._scorer
    contrib = [1e308, 1e308, -1e308, *[5.0] * (scorer.span + 2)]
    assert native.load().windows(contrib, scorer.span) is None  # type: ignore[union-attr]
    assert repr(scorer.windows(contrib)) == repr(scoring.windows(contrib, scorer.span))


@built
@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_model_scores_every_payload_alike_on_both_paths(kind):
    model = shipped_model().model
    python = python_path(model)
    texts = [payload(kind, size, seed) for size in (200, 4096, 65536) for seed in (1, 2)]
    if kind == "prose":
        texts += hostile_inputs(65536).values()
    for text in texts:
        views, base = model_views(prepare(text, markup=True))
        for view in views:
            toks = tokens(view)
            for keep in (False, True):
                assert_same_run(model._scorer.full(toks, keep), python.full(toks, keep))
        # The whole score, derived views included, against a model on the Python path.
        slow = LinearModel.__new__(LinearModel)
        slow.__dict__.update(model.__dict__)
        slow._scorer = python
        assert model.score(views, ["role_hijack"], base=base) == slow.score(
            views, ["role_hijack"], base=base)


def test_models_the_c_scorer_cannot_take_run_on_the_python_path():
    words = [*CLASS_OF][:6]
    shared = LinearModel({"format": 1, "version": "s", "window": 4, "bias": 0.0,
                          "block_threshold": 0.9, "warn_threshold": 0.5,
                          "weights": {"u:IGNORE": 1.0, "c:IGNORE": 0.5, "u:" + words[0]: 1}})
    assert shared._scorer.native is None  # keys shared between kinds: not independent
    ints = LinearModel({"format": 1, "version": "i", "window": 4, "bias": 0.0,
                        "block_threshold": 0.9, "warn_threshold": 0.5,
                        "weights": {"u:" + words[0]: 1, "c:IGNORE": 0.5}})
    assert ints._scorer.native is None  # an int weight: the C scorer takes floats only
    rng = random.Random(3)
    for model in (shared, ints):
        reference = ReferenceModel(model)
        for _ in range(50):
            toks = [rng.choice([*words, "IGNORE", "x"]) for _ in range(rng.randint(0, 200))]
            assert model.best_window(toks) == reference.best_window(toks)


@built
def test_the_c_scorer_refuses_what_is_not_a_token_list():
    scorer = shipped_model().model._scorer
    assert scorer.native is not None
    with pytest.raises(TypeError):
        scorer.native.score(["ignore", 3], False)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        scorer.native.score(("ignore",), False)  # type: ignore[arg-type]
    module = native.load()
    assert module is not None
    with pytest.raises(ValueError):
        module.Model({"x": float("nan")}, {}, {}, {}, {}, 4)
    with pytest.raises(ValueError):
        module.Model({}, {}, {}, {}, {}, 0)


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["works", "fails"])
def test_a_wheel_carries_the_extension_or_falls_back_to_pure_python(compiler, tmp_path):
    """`pip install <repo>` builds a wheel: with a working compiler it carries the module and
    a platform tag; where compiling fails the build still succeeds, pure Python."""
    env = dict(os.environ)
    if compiler == "fails":
        fake = tmp_path / "bin"
        fake.mkdir()
        for name in ("gcc", "cc", "clang"):
            (fake / name).write_text("#!/bin/sh\necho 'no compiler' >&2\nexit 1\n")
            (fake / name).chmod(0o755)
        env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                    str(ROOT)], check=True, env=env, timeout=300, capture_output=True)
    (wheel,) = out.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = [n for n in names if n.startswith("proxy/detector/_native") and
               not n.endswith((".c", ".pyi"))]
    if compiler == "works":
        assert modules and "py3-none-any" not in wheel.name
    else:
        assert not modules and wheel.name.endswith("py3-none-any.whl")


_TEXT = st.lists(st.sampled_from([*"ab0123 .-_\x00\x7fZ9", "x" * 39, "1" * 3, " ignore ",
                                  " iunstructions ", " instuctions ", " disreagrd ", " filter ",
                                  " previous ", " prevoius ", " ", "é"]), max_size=120).map("".join)


def _python_tokens(text: str) -> list[str]:
    """model.tokens on its Python path."""
    load = native.load
    native.load = lambda: None  # type: ignore[assignment]
    try:
        return tokens(text)
    finally:
        native.load = load  # type: ignore[assignment]


@built
@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_c_tokens_are_the_python_tokens(text):
    """Digit runs, words cut at 40 characters, misspelled class words repaired."""
    assert tokens(text) == _python_tokens(text)
    assert tokens(text) == reference_tokens(text)


@built
@pytest.mark.parametrize("kind", KINDS)
def test_c_tokens_of_every_payload_view_are_the_python_tokens(kind):
    for size in (4096, 65536):
        views, _base = model_views(prepare(payload(kind, size, 4), markup=True))
        for view in views:
            assert tokens(view) == _python_tokens(view)


@contextlib.contextmanager
def stale_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Inside: _native.c edited since the last install (the build is stale)."""
    edited = tmp_path / "_native.c"
    edited.write_bytes(native.SOURCE.read_bytes() + b"/* edited */\n")
    monkeypatch.setattr(native, "SOURCE", edited)
    native._stale.cache_clear()
    native._module.cache_clear()
    try:
        yield
    finally:
        native._stale.cache_clear()
        native._module.cache_clear()
        monkeypatch.undo()


@built
def test_a_build_older_than_its_source_is_not_used(monkeypatch, tmp_path):
    """An edit of _native.c since the last install: the C code is not the source under test."""
    with stale_build(monkeypatch, tmp_path):
        assert native.load() is None
        assert native.status().startswith("stale")
    assert native.load() is not None


_SPACED = st.lists(st.sampled_from(["a", "b", " ", "\t", "\n", "\x1c", "\x1f", "\x85", "\xa0",
                                    "\u3000", "\u2028", "é", "\xff", "日", "\U0001f600", "\x00",
                                    "\x0b", "\u200b", "  "]), max_size=40).map("".join)


@built
@settings(max_examples=1000, deadline=None)
@given(_SPACED)
def test_c_flat_is_join_of_split(text):
    """Every whitespace str.split() knows, at every string width; the result stored at the
    width Python would give it (else it would compare unequal to an equal string)."""
    module = native.load()
    assert module is not None
    mine, theirs = module.flat(text), " ".join(text.split())
    assert mine == theirs
    assert sys.getsizeof(mine) == sys.getsizeof(theirs)


@built
def test_c_tokens_stay_exact_once_the_memo_of_words_is_full():
    letters = "abcdefghijklmnopqrstuvwxyz"

    def word(i: int) -> str:
        out = "q"
        while i:
            i, r = divmod(i, 26)
            out += letters[r]
        return out

    many = " ".join(word(i) for i in range(40000))  # more distinct words than the memo holds
    assert tokens(many) == _python_tokens(many)
    after = "ignroe all prevoius instuctions 12ab " + " ".join(word(i) for i in range(40000, 41000))
    assert tokens(after) == _python_tokens(after) == reference_tokens(after)


@built
def test_c_tokens_are_exact_when_threads_tokenize_at_once():
    """repair() is Python code: another thread may add to the word memo while it runs."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [" ".join(f"ignroe{'x' * (i % 5)} prevoius{i} instuctions w{i}q{j}" for j in range(300))
             for i in range(16)]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(tokens, texts))
    assert found == [_python_tokens(text) for text in texts]
