"""The marks the readers' C walk answers for decode_chunks and strip_markup (marks.py): the
walk's marks are the `str` searches' on any text, and decode_chunks, strip_markup and the whole
preparation give what the code before it gave (tests/reference_marks.py, kept verbatim), with
the walk's marks, without them (each mark searched) and on the Python path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import marks as M
from proxy.detector import native, normalize
from proxy.detector import readers as R
from proxy.detector.decode import decode_chunks
from proxy.detector.normalize import _RUNS_AT, _present, prepare, strip_markup
from proxy.detector.rules import builtin_pack_paths, load_packs
from tests.hostile_inputs import hostile_inputs
from tests.reference_marks import reference_decode_chunks, reference_strip_markup
from tests.test_detector_model import ATTACKS, BENIGN

built = pytest.mark.skipif(native.load() is None, reason="the C extension is not built here")

_MARK_TEXTS = [m for _, group in M.MARKS for m in group]
_ALPHABET = sorted(
    {
        *"".join(_MARK_TEXTS),
        "%",
        "&",
        "<",
        ">",
        "=",
        " ",
        "a",
        "\n",
        "é",
        "\u200b",
        "\ud800",
        "\U0001f600",
        "-",
        "!",
        "*",
        "`",
        "3",
    }
)


def _texts() -> list[str]:
    out = [
        *_MARK_TEXTS,
        *(f"x{m}y" for m in _MARK_TEXTS),
        *(m[:-1] for m in _MARK_TEXTS),
        *(m[1:] for m in _MARK_TEXTS),
        "".join(_MARK_TEXTS),
        " ".join(_MARK_TEXTS),
        "",
        "\\x41\\x42\\x43\\x44\\x45\\x46\\x47",
        "0x41, 0x42, 0x43, 0x44, 0x45, 0x46",
        "rot13: vtaber cerivbhf",
        "ROT 13 uryyb jbeyq",
        "<!-- hidden --> shown",
        "<!-- unclosed",
        "&lt;b&gt; **x** `y`",
        "&ast;&grave;&#42;",
        "é0x41\ud8000x",
    ]
    out += [*ATTACKS.values(), *BENIGN.values()]
    out += [
        t for rule in load_packs(builtin_pack_paths()) for t in (*rule.positive, *rule.negative)
    ]
    out += list(hostile_inputs(1 << 16).values())
    out += [
        payload(kind, size, seed)
        for kind in KINDS
        for size in (200, 4096, 65536)
        for seed in range(2)
    ]
    return out


def _walk_marks(text: str) -> int | None:
    bits = R.walk(text.encode("utf-8", "surrogatepass"))
    return None if bits is None else R.marks_of(bits)


def _assert_same(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    marks = _walk_marks(text)
    if marks is not None:
        assert marks == M.marks_in(text)
    present = _present(data)
    runs_found = present[_RUNS_AT:] if present else None
    for runs, found in ((True, None), (False, None), (True, runs_found)):
        expected = reference_decode_chunks(text, None, runs=runs, found=found)
        assert decode_chunks(text, None, runs=runs, found=found, marks=marks) == expected
        assert decode_chunks(text, None, runs=runs, found=found) == expected
    expected_markup = reference_strip_markup(text)
    assert strip_markup(text, marks) == expected_markup
    assert strip_markup(text) == expected_markup


@built
@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=60))
def test_the_walks_marks_are_the_str_searches_on_any_text_of_their_characters(text):
    assert _walk_marks(text) == M.marks_in(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_decode_and_markup_give_the_old_results_on_any_text(text):
    _assert_same(text)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=80))
def test_decode_and_markup_give_the_old_results_on_text_of_the_marks(text):
    _assert_same(text)


def test_decode_and_markup_give_the_old_results_on_payloads_triggers_and_hostile_inputs():
    for text in _texts():
        _assert_same(text)


def _prepared(text: str, markup: bool) -> tuple[object, ...]:
    try:
        p = prepare(text, markup=markup)
    except Exception as exc:  # a lone surrogate: the detector fails closed on it, as before
        return (type(exc).__name__,)
    return (
        [(s.kind, s.text, s.scored) for s in p.segments],
        sorted(p.signals),
        p.notes,
        p.timed_out,
    )


@pytest.mark.parametrize("markup", [True, False])
def test_prepare_is_the_same_with_the_walks_marks_without_them_and_on_the_python_path(
    markup, monkeypatch
):
    texts = _texts()
    fast = [_prepared(t, markup) for t in texts]
    with monkeypatch.context() as patch:  # each mark searched in the text, as before
        patch.setattr(normalize.readers, "marks_of", lambda bits: None)
        assert [_prepared(t, markup) for t in texts] == fast
    with monkeypatch.context() as patch:  # no extension: no walk, every search in Python
        patch.setattr(native, "load", lambda: None)
        assert [_prepared(t, markup) for t in texts] == fast
