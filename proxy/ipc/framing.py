"""Newline-delimited JSON framing: one object per line, whatever the reads look like."""

from __future__ import annotations

import logging
from typing import Any

import orjson

MAX_LINE = 1024 * 1024  # docs/ipc.md: a longer line is dropped, the connection stays up

log = logging.getLogger(__name__)


def encode(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


class LineDecoder:
    """Turns arbitrary chunks of bytes into messages (dicts with a string `type`).

    A message split across chunks, or several in one chunk, decode the same. Oversize lines,
    invalid JSON and non-objects are dropped (and counted) so one bad peer message never
    desynchronises the stream.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._max_line = max_line
        self._buf = bytearray()
        self._skipping = False  # inside an oversize line: discard until its newline
        self.dropped = 0

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        self._buf += chunk
        while True:
            end = self._buf.find(b"\n")
            if self._skipping:  # the tail of an oversize line: discard through its newline
                if end < 0:
                    self._buf.clear()
                    return out
                del self._buf[: end + 1]
                self._skipping = False
                continue
            if end < 0:
                if len(self._buf) > self._max_line:
                    self._drop("line over %d bytes", self._max_line)
                    self._buf.clear()
                    self._skipping = True
                return out
            line = bytes(self._buf[:end])
            del self._buf[: end + 1]
            if len(line) > self._max_line:
                self._drop("line over %d bytes", self._max_line)
                continue
            message = self._parse(line)
            if message is not None:
                out.append(message)

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        if not line.strip():
            return None
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._drop("line is not JSON")
            return None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            self._drop("line is not an object with a string type")
            return None
        return value

    def _drop(self, why: str, *args: object) -> None:
        self.dropped += 1
        log.warning("ipc: dropped a message: " + why, *args)
