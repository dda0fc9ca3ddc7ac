"""Newline-delimited JSON framing for the local socket (docs/ipc.md, "Framing").

Pure Python so the rules (split reads, several messages per read, oversize and non-object lines
dropped while the connection stays up) are unit-tested without Qt.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger(__name__)

MAX_LINE = 1 << 20  # 1 MiB, per docs/ipc.md


class LineDecoder:
    """Feed bytes as they arrive; get back the complete JSON objects they finish."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._buf = bytearray()
        self._max = max_line
        self._skipping = False  # inside an oversize line: discard up to its newline

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buf += data
        out: list[dict[str, Any]] = []
        while True:
            end = self._buf.find(b"\n")
            if end < 0:
                if len(self._buf) > self._max:
                    if not self._skipping:
                        log.warning("dropping a socket line over %d bytes", self._max)
                    self._skipping = True
                    self._buf.clear()
                return out
            line = bytes(self._buf[:end])
            del self._buf[: end + 1]
            if self._skipping:
                self._skipping = False
                continue
            message = decode_line(line, self._max)
            if message is not None:
                out.append(message)


def decode_line(line: bytes, max_line: int = MAX_LINE) -> dict[str, Any] | None:
    if not line.strip():
        return None
    if len(line) > max_line:
        log.warning("dropping a socket line over %d bytes", max_line)
        return None
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        log.warning("dropping a socket line that is not JSON: %.80r", line)
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        log.warning("dropping a socket line that is not an object with a type: %.80r", line)
        return None
    return value


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
