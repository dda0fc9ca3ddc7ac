"""Every match of an RE2 pattern over bytes as (start, end), without the wrapper's objects.

The `re2` module's finditer builds a Match object per match in Python (its offsets decoded,
its groups counted), some 2 µs each: a log line's timestamps cost more that way than the
search itself. This walks the same matches with the compiled pattern's own Match call,
advancing exactly as finditer does on bytes. That call is the wrapper's internal API: it is
checked against finditer once per process, and finditer is used if it is missing or differs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

_PROBE = (rb"a*|x{2,}", b"xx aab\nxxxa")


@functools.cache
def compiled(pattern: str | bytes) -> Any:
    """`pattern` compiled by re2, once per process and only when first needed (the import
    is not on the start-up path of a text that never asks)."""
    import re2

    return re2.compile(pattern)


def spans(pattern: Any, data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each match of `pattern` (compiled by re2.compile) in `data`, in the
    order and with the offsets of `m.span() for m in pattern.finditer(data)`; lazily, as
    finditer, so a caller can stop at a deadline."""
    if not _direct():
        yield from (m.span() for m in pattern.finditer(data))
        return
    yield from _walk(pattern, data)


def found(pattern: Any, data: bytes) -> bool:
    """Whether `pattern` matches anywhere in `data` (pattern.search(data) is not None)."""
    if not _direct():
        return pattern.search(data) is not None
    regexp = pattern._regexp
    return bool(regexp.Match(type(regexp).Anchor.UNANCHORED, data, 0, len(data))[0][0] >= 0)


def _walk(pattern: Any, data: bytes) -> Iterator[tuple[int, int]]:
    regexp = pattern._regexp
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


@functools.cache
def _direct() -> bool:
    """Whether the compiled pattern's Match call is there and walks as finditer does."""
    import re2

    pattern, probe = re2.compile(_PROBE[0]), _PROBE[1]
    try:
        return list(_walk(pattern, probe)) == [m.span() for m in pattern.finditer(probe)]
    except Exception:  # another wrapper version: its own finditer, slower
        return False
