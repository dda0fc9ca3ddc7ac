"""Strict JSON for frames: read a line the way every mainstream parser would, or refuse it.

orjson already refuses invalid UTF-8 (overlong forms, surrogate bytes), lone surrogate escapes,
NaN/Infinity, trailing content and nesting past 1024. What it accepts silently, and parsers
disagree on, is checked here: duplicate keys (which one wins differs) and nesting past our own
limit. The common frame costs one orjson parse and one re-serialisation compared in C; only a
frame that is not in canonical form pays for the stdlib's duplicate-key pass.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from proxy.errors import GatewatchError

MAX_DEPTH = 254  # the deepest orjson writes back; far below any mainstream parser's limit
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_WS = b" \t\r\n"


class FrameError(GatewatchError, ValueError):
    """A frame Gatewatch will not pass on: `code` is the JSON-RPC error code to answer with."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def parse(data: bytes) -> tuple[Any, bool]:
    """(value, canonical). `canonical` means the frame is exactly orjson's own serialisation of
    the value, so an id re-serialised from it is the text the sender wrote."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FrameError(PARSE_ERROR, f"not strict JSON: {exc}") from None
    # A frame that is its own canonical form cannot hold a duplicate key: the dropped member
    # would be missing from the re-serialisation. SDK clients and servers write compact JSON.
    # The re-serialisation is also the depth check: orjson refuses to write past MAX_DEPTH
    # (tests/test_relay_strict.py pins that), and counting brackets would cost more than it.
    try:
        canonical = orjson.dumps(value) == data.strip(_WS)
    except TypeError:
        raise FrameError(INVALID_REQUEST, f"nested deeper than {MAX_DEPTH} levels") from None
    if not canonical:
        _no_duplicates(data)
    return value, canonical


def _no_duplicates(data: bytes) -> None:
    try:
        json.loads(data, object_pairs_hook=_unique)
    except RecursionError:
        raise FrameError(INVALID_REQUEST, "nested too deeply") from None
    except ValueError as exc:
        if isinstance(exc, FrameError):
            raise
        # orjson read it; the stdlib did not (e.g. an integer too long to convert): refuse.
        raise FrameError(PARSE_ERROR, f"not strict JSON: {exc}") from None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [key for key, _ in pairs]
        dupe = next(key for i, key in enumerate(keys) if key in keys[:i])
        raise FrameError(INVALID_REQUEST, f"duplicate key {dupe[:64]!r}")
    return out

