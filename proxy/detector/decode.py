"""Find encoded chunks (base64, hex, URL escapes, ROT13) that decode to readable text."""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
import time
from typing import Any

from proxy.detector.marks import HEX_ESCAPE, HEX_PREFIX, ROT_DIGITS, ROT_WORD
from proxy.detector.re2spans import found as re2_found
from proxy.detector.re2spans import spans

MIN_DECODED_CHARS = 6

_ALL_HEX = re.compile(r"[0-9A-Fa-f]{20,}")
# Separated hex forms; each is only searched when its marker occurs, which keeps ordinary text
# (and long runs of hex-looking letters) from costing a regex pass per form.
_HEX_SEPARATED = (
    ("\\x", re.compile(r"(?:\\x[0-9A-Fa-f]{2}){6,}")),
    ("0x", re.compile(r"(?:0x[0-9A-Fa-f]{2}[, ]{0,2}){6,}")),
)
# decode_chunks names these two markers by position.
assert [marker for marker, _ in _HEX_SEPARATED] == ["\\x", "0x"]
_HEX_SPACED_PATTERN = r"\b[0-9A-Fa-f]{2}(?:[ :][0-9A-Fa-f]{2}){7,}\b"
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# Two or more escapes, written to start with the literal "%": the regex engine then skips to
# each "%" at C speed instead of trying the group at every character (20 ms per MB).
_URL_RUN = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})+")
# "rot13" in any case, with a space or dash or nothing before the 13 (no character but the two
# ASCII cases matches r, o or t ignoring case), for RE2 over the bytes: Python's engine tried
# it, case-folding, at every character (4 ms per MB).
_ROT13_MARK = rb"[rR][oO][tT][ -]?13"
_LETTER = re.compile(r"[^\W\d_]")
_LAYOUT = {ord("\n"): None, ord("\r"): None, ord("\t"): None}


def looks_like_text(value: str) -> bool:
    """Decoded bytes count as text when all of it is printable and it is mostly letters."""
    if len(value) < MIN_DECODED_CHARS:
        return False
    if not value.translate(_LAYOUT).isprintable():
        return False
    non_space = len(value) - value.count(" ")
    return len(_LETTER.findall(value)) >= 0.4 * max(non_space, 1)


def _utf8(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if looks_like_text(text) else None


def _from_base64(token: str) -> str | None:
    body = token.rstrip("=")
    if body.isalpha() and (body.islower() or body.isupper()):
        return None  # a plain word, not an encoding
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    padded = body + "=" * (-len(body) % 4)
    alphabet = b"-_" if ("-" in body or "_" in body) else b"+/"
    try:
        raw = base64.b64decode(padded, altchars=alphabet, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _utf8(raw)


# The prefilter: an encoded chunk worth decoding starts at the edge of a run and its first
# characters already spell the start of text. In base64, the first two characters of a group
# carry the top 10 bits of its first two bytes: printable ASCII (0x20-0x7e, after a possible
# line break) or a UTF-8 lead byte followed by a continuation byte. In hex, each pair is a
# printable ASCII byte, a line break or tab, or a two-byte UTF-8 character. Hashes, ids, keys
# and identifiers fail within a few characters, so text full of base64-alphabet runs costs one
# linear RE2 pass and no decode attempt.
_B64_TEXT_START = r"(?:[A-Za-f][C-HS-Xi-nyz0-3]|[w-z0-9][I-LYZabo-r4-7])"
_HEX_TEXT = r"(?:[2-7][0-9A-Fa-f]|0[9ADad]|[CDcd][0-9A-Fa-f][89ABab][0-9A-Fa-f])"
# A base64 candidate also has a letter beyond f (or + / - _) early on: an all-hex run (a hash,
# a key id) is never base64 of text, only possibly hex of it.
_CANDIDATES = (
    r"(?:^|[^A-Za-z0-9+/_-])(?:"
    rf"{_B64_TEXT_START}[0-9A-Fa-f]{{0,40}}[G-Zg-z+/_-][A-Za-z0-9+/_-]{{15,}}={{0,2}}"
    rf"|{_HEX_TEXT}{{10,}}[0-9A-Fa-f]*"
    r")"
)
_RUN_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


# What decode_chunks searches with RE2 for runs to decode, for a caller's combined prefilter.
RUN_PATTERNS = (_CANDIDATES, _HEX_SPACED_PATTERN)


@functools.cache
def _candidates() -> Any:
    # RE2 (linear): Python's engine restarts a run at every character of every long word.
    import re2

    return re2.compile(_CANDIDATES.encode())


@functools.cache
def _hex_spaced() -> Any:
    # RE2 (linear, DFA) to see whether spaced hex occurs at all: Python's engine re-tries this
    # pattern at every word boundary of ordinary text.
    import re2

    return re2.compile(_HEX_SPACED_PATTERN.encode())


@functools.cache
def _hex_separated(index: int) -> Any:
    # RE2 over the bytes first: "0x" and "\\x" occur all over source code, where Python's
    # engine tries the whole pattern at each of them; the rare text with a run is searched
    # again below for the matches themselves.
    import re2

    return re2.compile(_HEX_SEPARATED[index][1].pattern.encode())


@functools.cache
def _rot13_mark() -> Any:
    import re2

    return re2.compile(_ROT13_MARK)


def _from_hex(token: str) -> str | None:
    digits = re.sub(r"\\x|0x|[ ,:]", "", token)
    try:
        raw = bytes.fromhex(digits[: len(digits) - len(digits) % 2])
    except ValueError:
        return None
    return _utf8(raw)


def url_unescape(text: str) -> str:
    """Decode %XX escapes; runs of escapes are decoded together so UTF-8 sequences survive.

    A C-speed path (str.replace, bytes.fromhex per run) instead of urllib's per-escape Python
    loop, which takes a second on a megabyte of escapes.
    """

    def run(match: re.Match[str]) -> str:
        return bytes.fromhex(match.group().replace("%", "")).decode("utf-8", "replace")

    return _URL_RUN.sub(run, text.replace("%20", " "))


def decode_chunks(
    text: str,
    deadline: float | None = None,
    *,
    runs: bool = True,
    found: tuple[bool, ...] | None = None,
    marks: int | None = None,
) -> list[tuple[str, str]]:
    """Every encoded chunk of `text` that decodes to readable text, as (encoding, decoded).

    Stops early (returning what it has) when `deadline` (a perf_counter value) passes.
    `runs=False`: the caller found no RUN_PATTERNS match in `text`, so only the escapes
    (\\x, 0x, %XX) and ROT13 are looked for. `found`: whether each of RUN_PATTERNS occurs in
    `text`, when the caller knows, so those searches are not run again. `marks`: which of
    marks.py's marks occur in `text`, when the caller knows (the readers' walk found them).
    """
    if marks is None:
        escaped, prefixed = "\\x" in text, "0x" in text
    else:
        escaped, prefixed = bool(marks & HEX_ESCAPE), bool(marks & HEX_PREFIX)
    if (
        not runs
        and not escaped
        and not prefixed
        and "%" not in text
        and not ("13" in text if marks is None else marks & ROT_DIGITS)
    ):
        return []  # no run, no escape and no ROT13 mark: nothing to decode
    candidates, spaced_hex = found if found is not None else (runs, None)
    found_chunks: list[tuple[str, str]] = []
    seen: set[str] = set()

    def expired() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    # RE2 over the UTF-8 bytes: its str API converts every match offset back to characters,
    # which costs a pass over the text per match on non-ASCII input.
    data = text.encode("utf-8", "surrogatepass") if runs else b""
    for first, last in spans(_candidates(), data) if runs and candidates else ():
        raw = data[first:last]
        start = 0
        while raw[start] not in _RUN_START:  # the character before the run (UTF-8: 1-4 bytes)
            start += 1
        token = raw[start:].decode("ascii")
        if token in seen:
            continue
        seen.add(token)
        decoded = _from_base64(token)
        if decoded is not None:
            found_chunks.append(("base64", decoded))
        elif _ALL_HEX.fullmatch(token):  # a hex run is also a base64-alphabet token
            decoded = _from_hex(token)
            if decoded is not None:
                found_chunks.append(("hex", decoded))
        if len(seen) % 256 == 0 and expired():
            return found_chunks
    markers = [index for index, here in enumerate((escaped, prefixed)) if here]  # _HEX_SEPARATED
    if markers or runs:
        data = data or text.encode("utf-8", "surrogatepass")
    hex_candidates = [
        _HEX_SEPARATED[index][1] for index in markers if re2_found(_hex_separated(index), data)
    ]
    if runs and (re2_found(_hex_spaced(), data) if spaced_hex is None else spaced_hex):
        hex_candidates.append(re.compile(_HEX_SPACED_PATTERN))
    for pattern in hex_candidates:
        for match in pattern.finditer(text):
            token = match.group()
            if token in seen:
                continue
            seen.add(token)
            decoded = _from_hex(token)
            if decoded is not None:
                found_chunks.append(("hex", decoded))
    if "%" in text and _URL_ESCAPE.search(text):
        unescaped = url_unescape(text)
        if unescaped != text:
            found_chunks.append(("url", unescaped))
    rot = (
        "13" in text and ("rot" in text or "ROT" in text or "Rot" in text)
        if marks is None
        else marks & ROT_DIGITS and marks & ROT_WORD
    )
    if rot and re2_found(_rot13_mark(), data or text.encode("utf-8", "surrogatepass")):
        found_chunks.append(("rot13", codecs.encode(text, "rot13")))
    return found_chunks
