"""decode_chunks and strip_markup as they were before the readers' walk answered their marks
(main at session 10's start, kept verbatim as the oracle): every mark searched in the text.
What a renderer does not show (session 20) is read as proxy.detector.unrendered reads it."""

# ruff: noqa
from __future__ import annotations

import codecs
import re
import time

from proxy.detector.decode import (
    _ALL_HEX,
    _HEX_SEPARATED,
    _HEX_SPACED_PATTERN,
    _RUN_START,
    _URL_ESCAPE,
    _candidates,
    _from_base64,
    _from_hex,
    _hex_separated,
    _hex_spaced,
    _rot13_mark,
    url_unescape,
)
from proxy.detector import unrendered
from proxy.detector.normalize import _HTML_TAG, _INLINE_TAGS, _BLOCK_TAGS
from proxy.detector.normalize import _ENTITY, _MARKDOWN_EMPHASIS, _cut_comments, _visible
from proxy.detector.re2spans import found as re2_found
from proxy.detector.re2spans import spans


def reference_decode_chunks(
    text: str,
    deadline: float | None = None,
    *,
    runs: bool = True,
    found: tuple[bool, ...] | None = None,
) -> list[tuple[str, str]]:
    """Every encoded chunk of `text` that decodes to readable text, as (encoding, decoded).

    Stops early (returning what it has) when `deadline` (a perf_counter value) passes.
    `runs=False`: the caller found no RUN_PATTERNS match in `text`, so only the escapes
    (\\x, 0x, %XX) and ROT13 are looked for. `found`: whether each of RUN_PATTERNS occurs in
    `text`, when the caller knows, so those searches are not run again.
    """
    if (
        not runs
        and "\\x" not in text
        and "0x" not in text
        and "%" not in text
        and ("13" not in text)
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
    markers = [index for index, (marker, _) in enumerate(_HEX_SEPARATED) if marker in text]
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
    if (
        "13" in text
        and ("rot" in text or "ROT" in text or "Rot" in text)
        and re2_found(_rot13_mark(), data or text.encode("utf-8", "surrogatepass"))
    ):
        found_chunks.append(("rot13", codecs.encode(text, "rot13")))
    return found_chunks


def reference_strip_markup(text: str) -> tuple[str, list[str], list[str], bool]:
    """Remove HTML comments and tags, decode entities and markdown emphasis.

    Returns the visible text, the comment bodies, the tags that carried attributes (where
    image and link URLs live) and whether any tag hid its text with CSS.
    """
    comments: list[str] = []
    if "<!--" in text:
        text, comments = _cut_comments(text)
    comments += unrendered.markdown_hidden(text)
    attributed: list[str] = []
    css_hidden = False
    if "<" in text:

        hiding: list[re.Match[str]] = []
        names = unrendered.style_sheet_names(text)

        def replace(match: re.Match[str]) -> str:
            nonlocal css_hidden
            name = match.group(2).lower()
            if name not in _INLINE_TAGS and name not in _BLOCK_TAGS:
                return match.group()  # <|im_start|>, <system>, <instructions>: keep for the rules
            attrs = match.group(3)
            if name in unrendered.UNRENDERED_TAGS and not match.group(1):
                css_hidden = True  # never rendered while scripts run
                hiding.append(match)
            if attrs.strip():
                attributed.append(match.group())
                if unrendered.may_hide(attrs, names) and unrendered.hides(attrs, names):
                    css_hidden = True
                    if not match.group(1) and name not in unrendered.VOID_TAGS:
                        hiding.append(match)
            return "" if name in _INLINE_TAGS else " "

        original = text
        text = _HTML_TAG.sub(replace, text)
        if hiding:
            bodies = unrendered.bodies(original, hiding, _HTML_TAG)
            shown = (_visible(body) for body in bodies)
            comments += [part for part in shown if part and not part.isspace()]
    if "&" in text and _ENTITY.search(text):
        # Its entity table costs import time; most results have no entities.
        from proxy.detector.entities import unescape

        text = unescape(text)
    # str.replace, not translate(): translate walks a dict per character on non-ASCII text.
    for mark in _MARKDOWN_EMPHASIS:
        if mark in text:
            text = text.replace(mark, "")
    return text, comments, attributed, css_hidden
