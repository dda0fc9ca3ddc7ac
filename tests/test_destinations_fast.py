"""The faster destination finders, on the C path and on the Python path, find exactly what the
old ones found (tests/reference_destinations.py): same keys, kinds and spans, on the
benchmark's payloads and on generated text built to hit the edges (label runs of 63 and 64
characters, non-ASCII letters and digits beside a name, '#' after an entity or a path, colon
runs with and without '::')."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.engine import destinations
from tests import reference_destinations as reference
from tests.test_destinations_native import python_path


def fresh(text: str, python: bool = False) -> tuple[destinations.Found, ...]:
    """What the finders give now (on the C path, or with `python` on the Python path), less
    the names beyond ASCII that only they find (checked to be just that: bare hosts whose name
    is not ASCII, added where nothing else was)."""
    with python_path(python):
        found = destinations.extract_destinations(text)
    old = set(reference.extract(text))
    added = [f for f in found if f not in old]
    assert all(kind in (destinations.HOST, destinations.URL)
               and not text[start:end].split("/", 1)[0].isascii()
               for _key, kind, start, end in added), added
    return tuple(f for f in found if f in old)


def test_a_word_character_is_exactly_isalnum_or_underscore():
    """The finders' lookbehinds use `\\w` where the old loops asked `isalnum()` or '_'."""
    word = re.compile(r"\w")
    assert [hex(cp) for cp in range(sys.maxunicode + 1)
            if bool(word.match(chr(cp))) != (chr(cp).isalnum() or chr(cp) == "_")] == []


@pytest.mark.parametrize("python", [False, True], ids=["c", "python"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [200, 4096, 65536])
def test_payloads_give_what_they_gave(kind, size, python):
    for variant in range(4):
        text = payload(kind, size, variant)
        assert fresh(text, python) == reference.extract(text)


PIECES = st.sampled_from([
    "a", "Z", "7", "0", "-", "_", ".", "..", "@", "/", "#", "&#", ":", "::", " ", "\n", ",", "(",
    ")", "+", "é", "\u0663", "ß", "[", "]", "example.com", "evil.example", "x.py", "1.2.3.4",
    "10.0.0.1.5", "2001:db8::1", "a:b:c:d:e:f:0:1", "#general", "bob@corp.example",
    "https://a.example/p", "a" * 62, "b" * 63, "c" * 64, "self.foo", "#t.x", "&#x41;",
    "+1 555 123 4567", "(555) 123-4567", "DE89 3704 0044 0532 0130 00",
])


@settings(max_examples=2000, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join), st.booleans())
def test_generated_text_gives_what_it_gave(text, python):
    assert fresh(text, python) == reference.extract(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1-_.@/#&:x \u00e9\u0663"), max_size=200), st.booleans())
def test_dense_punctuation_gives_what_it_gave(text, python):
    assert fresh(text, python) == reference.extract(text)


@pytest.mark.parametrize("text", [
    "see " + "a" * 63 + ".example now",  # the longest first label still names a host
    "see " + "a" * 64 + ".example now",  # one longer is not a name
    "x" + "a" * 63 + ".example",
    "é" + "mail.example",  # a letter glued before it: not that host (the whole name is one)
    "\u0663host.example",  # an Arabic-Indic digit is a word character too
    "&#general and /#path and a#b and #ok",
    "one:two:three:four:five:six:seven:eight",
    "ab:cd:ef:01:23:45:67:89 and 1:2:3:4:5:6:7:8",
    "time 12:30:45, list [::2], fe80::1",
])
@pytest.mark.parametrize("python", [False, True], ids=["c", "python"])
def test_edges_give_what_they_gave(text, python):
    assert fresh(text, python) == reference.extract(text)
