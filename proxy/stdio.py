"""The proxy's own stdin and stdout as asyncio streams.

Pipes and sockets use asyncio's pipe transports. Anything else (a regular file, a console on
Windows) falls back to a reader thread and blocking writes, which are fine for those cases.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from typing import Protocol


class ByteWriter(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...


def _is_stream_fd(fd: int) -> bool:
    if os.name != "posix":
        return False
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def open_stdin(limit: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    fd = sys.stdin.fileno()
    if _is_stream_fd(fd):
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(fd, "rb", buffering=0, closefd=False),
        )
        return reader

    def pump() -> None:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()
    return reader


class _BlockingWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


async def open_stdout() -> ByteWriter:
    loop = asyncio.get_running_loop()
    fd = sys.stdout.fileno()
    if _is_stream_fd(fd) and not os.isatty(fd):
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin,
            os.fdopen(fd, "wb", buffering=0, closefd=False),
        )
        return asyncio.StreamWriter(transport, protocol, None, loop)
    return _BlockingWriter(fd)
