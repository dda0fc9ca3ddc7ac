"""The readers' gates (proxy/detector/readers.py `_gates`): the C walk over the bytes
(_native.needles) and the Python searches open exactly the gates the session-7 code opened (kept
here verbatim as the oracle), on the payloads, on each gate's trigger and on any bytes; and
the learned layer's long-run finder (textdiff.long_runs) against the regex it replaced."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import native
from proxy.detector import readers as R
from tests.hostile_inputs import hostile_inputs

built = pytest.mark.skipif(native.load() is None, reason="the C extension is not built here")


def old_gates(data: bytes, chars: set[str] | None) -> tuple[bool, ...]:
    """readers._gates as it was before the C walk (main at session 8's start), with the
    gate of the readers added since."""
    wide = chars is not None
    some = chars if chars is not None else set()
    return (
        b"===" in data,
        b"<~" in data,
        b"\nbegin " in data or data.startswith(b"begin "),
        b"=\n" in data or b"=\r\n" in data or b"=20" in data or b"=3D" in data
        or b"=C3" in data or b"=E2" in data,
        b"=?" in data,
        b".-" in data or b"-." in data or (wide and not some.isdisjoint(R._MORSE_CHARS)),
        wide and not some.isdisjoint(R._BRAILLE_CHARS),
        b"ndia" in data or b"NDIA" in data or b"scar" in data or b"SCAR" in data
        or b"tango" in data or b"Tango" in data or b"TANGO" in data,
        b"\\1" in data or b"\\u00" in data or b"U+00" in data or b"u+00" in data
        or b"0110" in data,
        b",10" in data or b",11" in data or b", 10" in data or b", 11" in data
        or (b" 10" in data and b" 11" in data),
        b" eht " in data or b" dna " in data or b" lla " in data or b" uoy " in data,
        wide and not some.isdisjoint(R._MARK_SET),
        # session 21: upside-down letters
        wide and not some.isdisjoint("ɐǝɟƃɥᴉɾʞɯɹʇʌʍʎ∀Ǝ⅁ᴚ⊥⅄"),
        # quoted pieces, two quotes about a comma or plus sign and a word to join
        any(sep in data for sep in (b'","', b'", "', b"','", b"', '", b"`,", b'+ "', b"+ '",
                                    b'+"', b"+'"))
        and any(word in data for word in (b"ncatenat", b"oin th", b"Join th", b"mbine ",
                                          b"mbine:", b"ssemble th", b"ppend th", b"spaces",
                                          b"ogether")),
        # session 22: words cut at a line's end
        b"-\n" in data or b"-\r\n" in data
        or (wide and not some.isdisjoint("\u2010\u2011\u2212\u2013\u2014")),
    )


def both_paths(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = text.encode("utf-8", "surrogatepass")
    chars = None if text.isascii() else set(text)
    expected = old_gates(data, chars)
    assert R._gates(data, chars) == expected
    with monkeypatch.context() as patch:
        patch.setattr(native, "load", lambda: None)
        assert R._gates(data, chars) == expected


def _triggers() -> list[str]:
    needles = [n.decode() for n in R._NEEDLES]
    texts = [*needles, *(f"x{n}y" for n in needles), *(n[:-1] for n in needles),
             "begin 644 x", "xbegin 644", " 10", " 11", "a 10 b 11", "\u2801", "e\u0301",
             "\u00b7", "", "=", "\n"]
    texts += [" ".join(needles), "".join(needles)]
    return texts


_BYTES_OF_GATES = sorted({chr(b) for n in R._NEEDLES for b in n} | {"x", " ", "\u2803", "\u0300"})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [200, 4096, 65536])
def test_the_gates_of_every_payload_are_the_old_gates(kind, size, monkeypatch):
    for window in range(3):
        both_paths(payload(kind, size, window), monkeypatch)


def test_the_gates_of_every_trigger_and_hostile_input_are_the_old_gates(monkeypatch):
    for text in [*_triggers(), *hostile_inputs(1 << 16).values()]:
        both_paths(text, monkeypatch)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_BYTES_OF_GATES), max_size=80))
def test_the_gates_of_any_text_made_of_their_bytes_are_the_old_gates(text):
    with pytest.MonkeyPatch.context() as patch:
        both_paths(text, patch)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_the_gates_of_any_text_are_the_old_gates(text):
    with pytest.MonkeyPatch.context() as patch:
        both_paths(text, patch)


@built
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.lists(st.binary(min_size=1, max_size=6), max_size=64))
def test_c_needles_finds_exactly_the_needles_in_the_bytes(data, needles):
    module = native.load()
    assert module is not None
    found = module.needles(data, tuple(needles))
    assert found == sum(1 << i for i, n in enumerate(needles) if n in data)


@built
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"c", b"ab", b"cc"]), max_size=80).map(b"".join),
       st.lists(st.lists(st.sampled_from(b"abc"), min_size=1, max_size=4).map(bytes),
                max_size=64))
def test_c_needles_on_a_small_alphabet_finds_what_in_finds(data, needles):
    """Needles of one to four letters of three (so most occur, at the end too), searched with
    their tuple's tables built once and then kept (the same tuple, then another one)."""
    module = native.load()
    assert module is not None
    kept = tuple(needles)
    for text in (data, data[:-1], data[1:], data + b"a", b""):
        assert module.needles(text, kept) == sum(1 << i for i, n in enumerate(kept) if n in text)
    other = tuple(reversed(kept))
    assert module.needles(data, other) == sum(1 << i for i, n in enumerate(other) if n in data)


@built
def test_c_needles_refuses_what_it_cannot_search():
    module = native.load()
    assert module is not None
    with pytest.raises(TypeError):
        module.needles(b"abc", (b"",))
    with pytest.raises(TypeError):
        module.needles(b"abc", ("a",))
    with pytest.raises(ValueError):
        module.needles(b"abc", (b"a",) * 65)
    kept = (b"bc", b"x")
    assert module.needles(b"abc", kept) == 1
    with pytest.raises(TypeError):  # refused: the tables kept for `kept` stay as they were
        module.needles(b"abc", (b"bc", "x"))
    assert module.needles(b"xbc", kept) == 3


# --- textdiff.long_runs, the learned layer's long tokens --------------------------------------


def _old_long_runs(mask: bytes) -> list[tuple[int, int]]:
    import re

    return [m.span() for m in re.finditer(rb"a{41,}", mask)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"a", b" "]), st.integers(1, 90)), max_size=12))
def test_long_runs_are_the_old_regexs_runs(pieces):
    from proxy.detector.textdiff import long_runs

    mask = b"".join(ch * n for ch, n in pieces)
    assert long_runs(mask) == _old_long_runs(mask)


@pytest.mark.parametrize("kind", KINDS)
def test_long_runs_of_every_payload_are_the_old_regexs_runs(kind):
    from proxy.detector.textdiff import long_runs, word_mask

    for size in (4096, 65536):
        mask = word_mask(payload(kind, size, 3).encode("ascii", "replace").decode())
        assert mask is not None
        assert long_runs(mask) == _old_long_runs(mask)
