"""Every match of an RE2 pattern over bytes as (start, end), without the wrapper's objects.

The `re2` module's finditer builds a Match object per match in Python (its offsets decoded,
its groups counted), some 2 µs each: a log line's timestamps cost more that way than the
search itself. This walks the same matches with the compiled pattern's own Match call,
advancing exactly as finditer does on bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def spans(pattern: Any, data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each match of `pattern` (compiled by re2.compile) in `data`, in the
    order and with the offsets of `m.span() for m in pattern.finditer(data)`; lazily, as
    finditer, so a caller can stop at a deadline."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None:  # another wrapper version: its own finditer
        yield from (m.span() for m in pattern.finditer(data))
        return
    match = regexp.Match
    unanchored = type(regexp).Anchor.UNANCHORED
    pos, end = 0, len(data)
    while True:
        start, stop = match(unanchored, data, pos, end)[0]
        if start < 0:
            return
        yield start, stop
        if pos == end:
            return
        pos = pos + 1 if stop == pos else stop


def found(pattern: Any, data: bytes) -> bool:
    """Whether `pattern` matches anywhere in `data` (pattern.search(data) is not None)."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None:
        return pattern.search(data) is not None
    return bool(regexp.Match(type(regexp).Anchor.UNANCHORED, data, 0, len(data))[0][0] >= 0)
