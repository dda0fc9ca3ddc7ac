"""What a frame that failed strict parsing seems to be, so that it can be answered.

A refused request still deserves an answer with its own id, and a withheld response must reach
the request it answers. This reader is deliberately forgiving (it never decides what is
forwarded, only whom to answer): it walks the top-level members of an object without
validating them, stops at the end of whatever bytes it was given (a truncated head of an
oversize frame works), and keeps each member's raw text so an id is echoed exactly as written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

SCAN_LIMIT = 64 * 1024  # members after this many bytes are not looked at
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SCALAR = re.compile(rb"[^\s,:{}\[\]\"]+")
_STRUCTURE = re.compile(rb'["{}\[\]]')
_SPACE = re.compile(rb"[ \t\r\n]*")


@dataclass(frozen=True, slots=True)
class Loose:
    """One message as a forgiving reader sees it."""

    kind: str  # request | notification | response | unknown
    raw_id: bytes | None  # the id's JSON text, when there is exactly one usable id
    method: str | None = None

    @property
    def id_value(self) -> Any:
        return orjson.loads(self.raw_id) if self.raw_id is not None else None


def read(data: bytes) -> list[Loose] | Loose:
    """A list for something that reads as a batch, else one message."""
    head = data[:SCAN_LIMIT].removeprefix(b"\xef\xbb\xbf")  # a BOM does not hide the id
    start = _SPACE.match(head, 0)
    i = start.end() if start else 0
    if head[i : i + 1] == b"[":
        return _batch(data)
    return _message(top_members(head))


def _batch(data: bytes) -> list[Loose]:
    """A batch's members, each id as the client wrote it, when the line is JSON at all."""
    buf = data.removeprefix(b"\xef\xbb\xbf")
    try:
        json.loads(buf.decode("utf-8", "replace"))
    except RecursionError:
        pass  # valid JSON nested deeper than this stack allows: other readers see its requests
    except ValueError:
        return []
    return _scan_batch(buf)


def _scan_batch(buf: bytes) -> list[Loose]:
    """The members of the array at the start of `buf`, read without recursion; [] when the
    array is not closed. Objects are read as top-level members, so ids keep their text."""
    i = _skip(buf, 0)
    if buf[i : i + 1] != b"[":
        return []
    i = _skip(buf, i + 1)
    out: list[Loose] = []
    if buf[i : i + 1] == b"]":
        return out
    while True:
        first = buf[i : i + 1]
        if first in (b"{", b"["):
            end = _container_end(buf, i)
        elif first == b'"':
            end = _string_end(buf, i)
        else:
            m = _SCALAR.match(buf, i)
            end = m.end() if m else -1
        if end < 0:
            return []
        out.append(_message(top_members(buf[i:end])) if first == b"{" else Loose("unknown", None))
        i = _skip(buf, end)
        sep = buf[i : i + 1]
        if sep == b"]":
            return out
        if sep != b",":
            return []
        i = _skip(buf, i + 1)


def _message(members: dict[str, list[bytes]], method: Any = None) -> Loose:
    if method is None and members.get("method"):
        method = _string(members["method"][0])
    method = method if isinstance(method, str) else None
    raw_id = _usable_id(members.get("id", []))
    if "method" in members:
        return Loose("request" if "id" in members else "notification", raw_id, method)
    if "result" in members or "error" in members:
        return Loose("response", raw_id)
    return Loose("unknown", raw_id)


def _usable_id(values: list[bytes]) -> bytes | None:
    """The id's text when every "id" member agrees and it is a string or a number."""
    if not values or any(v != values[0] for v in values):
        return None
    raw = values[0]
    if raw[:1] == b'"':
        try:
            return raw if isinstance(orjson.loads(raw), str) else None
        except orjson.JSONDecodeError:
            return None  # a string id that is itself malformed is not echoed
    return raw if _NUMBER.fullmatch(raw) else None


def _string(raw: bytes) -> str | None:
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def top_members(buf: bytes) -> dict[str, list[bytes]]:
    """Raw text of the top-level members of the object at the start of `buf`, by key. Objects
    and arrays are recorded as b"{" or b"["; a member cut off at the end of `buf` is left out."""
    out: dict[str, list[bytes]] = {}
    i = _skip(buf, 0)
    if buf[i : i + 1] != b"{":
        return out
    i += 1
    n = len(buf)
    while i < n:
        i = _skip(buf, i)
        if buf[i : i + 1] != b'"':
            return out
        end = _string_end(buf, i)
        if end < 0:
            return out
        key = _string(buf[i:end])
        i = _skip(buf, end)
        if buf[i : i + 1] != b":":
            return out
        i = _skip(buf, i + 1)
        first = buf[i : i + 1]
        if first == b'"':
            end = _string_end(buf, i)
        elif first in (b"{", b"["):
            end = _container_end(buf, i)
        else:
            m = _SCALAR.match(buf, i)
            end = m.end() if m else -1
        if end < 0:
            if key is not None:  # cut off: the member exists, its value is unknown
                out.setdefault(key, [])
            return out
        if key is not None:
            out.setdefault(key, []).append(buf[i:end] if first not in (b"{", b"[") else first)
        i = _skip(buf, end)
        if buf[i : i + 1] != b",":
            return out
        i += 1
    return out


def _skip(buf: bytes, i: int) -> int:
    m = _SPACE.match(buf, i)
    return m.end() if m else i


def _string_end(buf: bytes, i: int) -> int:
    """Index just past the string that starts at buf[i] == '"', or -1 if it is cut off."""
    j = i + 1
    while True:
        k = buf.find(b'"', j)
        if k < 0:
            return -1
        slashes = 0
        while buf[k - 1 - slashes] == 0x5C:  # backslash
            slashes += 1
        if slashes % 2 == 0:
            return k + 1
        j = k + 1


def _container_end(buf: bytes, i: int) -> int:
    level = 0
    while True:
        m = _STRUCTURE.search(buf, i)
        if m is None:
            return -1
        c = buf[m.start()]
        if c == 0x22:  # a string: skip it whole, brackets inside do not count
            i = _string_end(buf, m.start())
            if i < 0:
                return -1
            continue
        level += 1 if c in (0x7B, 0x5B) else -1
        i = m.end()
        if level == 0:
            return i
