"""HTML entities decoded exactly as `html.unescape` does, paying only for the ones that decode.

`html.unescape` calls back into Python for every `&` followed by a name-like run, entity or
not, and tries each of its prefixes against the entity table: minified JavaScript (`a&&b`) has
thousands of those per megabyte. A reference starts at an `&` and cannot contain another one,
so a text decodes piece by piece between `&`s, and a piece changes only when it starts with
`#` and a digit, `#x` and a hex digit, or an entity name (whole or a prefix of two characters
or more: what `html.unescape` tries); one RE2 search over the bytes finds those pieces.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

from proxy.detector.re2spans import spans


@functools.cache
def _decoding() -> Any:
    from html.entities import html5

    import re2

    names: list[str] = []
    for name in sorted(k for k in html5 if len(k) >= 2):
        if not (names and name.startswith(names[-1])):  # a name with a shorter one before it
            names.append(name)                          # is found by the shorter one
    pattern = "&(?:#[0-9]|#[xX][0-9a-fA-F]|" + "|".join(re.escape(k) for k in names) + ")"
    return re2.compile(pattern.encode())


def unescape(text: str) -> str:
    """`html.unescape(text)`."""
    if "&" not in text:
        return text
    if not text.isascii():  # RE2 gives byte offsets
        return html.unescape(text)
    starts = [start for start, _end in spans(_decoding(), text.encode("ascii"))]
    pieces: list[str] = []
    at = 0
    for start in starts:
        end = text.find("&", start + 1)
        end = len(text) if end < 0 else end
        pieces += [text[at:start], html.unescape(text[start:end])]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
