"""Newline-delimited frames from a byte stream, with bounded memory for oversize lines.

A line up to `max_line` bytes comes out whole. A longer one comes out in pieces (`Piece`), so the
relay can forward it untouched without holding tens of megabytes, and audit it as oversize.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

READ_SIZE = 1 << 18
# What the pipe transport asks the kernel for per read. asyncio asks for 256 KiB, so each read
# allocated (mmap'd, above malloc's threshold) 256 KiB, shrank it and unmapped it: three
# system calls, page faults and a TLB shootdown per frame. A pipe holds 64 KiB by default, so
# a larger request rarely returns more.
TRANSPORT_READ = 1 << 16


def _small_reads(reader: asyncio.StreamReader) -> None:
    transport = getattr(reader, "_transport", None)  # asyncio's pipe and socket transports
    size = getattr(transport, "max_size", None)
    if isinstance(size, int) and size > TRANSPORT_READ:
        transport.max_size = TRANSPORT_READ  # type: ignore[union-attr]


@dataclass(slots=True)
class Line:
    data: bytes  # includes the trailing b"\n" unless the stream ended without one


@dataclass(slots=True)
class Piece:
    data: bytes
    first: bool
    last: bool


async def read_frames(reader: asyncio.StreamReader, max_line: int) -> AsyncIterator[Line | Piece]:
    _small_reads(reader)
    buf = bytearray()  # the start of a line that has not ended yet
    streaming = False  # inside an oversize line
    while True:
        chunk = await reader.read(READ_SIZE)
        if not chunk:
            if streaming:
                yield Piece(bytes(buf), first=False, last=True)
            elif buf:
                yield Line(bytes(buf))
            return
        if streaming:
            nl = chunk.find(b"\n")
            if nl == -1:
                yield Piece(chunk, first=False, last=False)
                continue
            yield Piece(chunk[: nl + 1], first=False, last=True)
            streaming = False
            chunk = chunk[nl + 1 :]
        # Lines are cut from the chunk itself unless a line began in an earlier read: a chunk
        # that is one whole line (the common frame) comes out as it was read, uncopied.
        data: bytes | bytearray = chunk
        if buf:
            buf += chunk
            data = buf
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl == -1:
                break
            yield Line(bytes(memoryview(data)[start : nl + 1]) if data is buf
                       else chunk[start : nl + 1])
            start = nl + 1
        if data is buf:
            del buf[:start]
        elif start < len(chunk):
            buf += memoryview(chunk)[start:]
        if len(buf) > max_line:
            yield Piece(bytes(buf), first=True, last=False)
            buf.clear()
            streaming = True
