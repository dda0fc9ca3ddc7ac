"""Find encoded chunks (base64, hex, URL escapes, ROT13) that decode to readable text."""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import time
from urllib.parse import unquote

MIN_DECODED_CHARS = 6

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX_RUNS = (
    re.compile(r"(?:[0-9A-Fa-f]{2}){10,}"),
    re.compile(r"(?:\\x[0-9A-Fa-f]{2}){6,}"),
    re.compile(r"(?:0x[0-9A-Fa-f]{2}[, ]{0,2}){6,}"),
    re.compile(r"(?:[0-9A-Fa-f]{2}[ :]){7,}[0-9A-Fa-f]{2}"),
)
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_ROT13_MARK = re.compile(r"rot[ -]?13", re.IGNORECASE)
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


def _from_hex(token: str) -> str | None:
    digits = re.sub(r"\\x|0x|[ ,:]", "", token)
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    return _utf8(raw)


def decode_chunks(text: str, deadline: float | None = None) -> list[tuple[str, str]]:
    """Every encoded chunk of `text` that decodes to readable text, as (encoding, decoded).

    Stops early (returning what it has) when `deadline` (a perf_counter value) passes.
    """
    found: list[tuple[str, str]] = []
    seen: set[str] = set()

    def expired() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    for match in _BASE64.finditer(text):
        token = match.group()
        if token in seen:
            continue
        seen.add(token)
        decoded = _from_base64(token)
        if decoded is not None:
            found.append(("base64", decoded))
        if len(seen) % 256 == 0 and expired():
            return found
    for pattern in _HEX_RUNS:
        for match in pattern.finditer(text):
            token = match.group()
            if token in seen:
                continue
            seen.add(token)
            decoded = _from_hex(token)
            if decoded is not None:
                found.append(("hex", decoded))
    if text.count("%") >= 3 and len(_URL_ESCAPE.findall(text, 0, 1 << 20)) >= 3:
        unescaped = unquote(text, errors="replace")
        if unescaped != text:
            found.append(("url", unescaped))
    if _ROT13_MARK.search(text):
        found.append(("rot13", codecs.encode(text, "rot13")))
    return found
