"""The floor for the relay benchmark: the least an asyncio stdio relay can do.

    python bench/raw_relay.py COMMAND [ARGS...]

Spawns COMMAND and copies newline-delimited frames both ways with one `readline` and one
`write` per frame: no parsing, no audit, no policy. Whatever `gatewatch run` costs above this
is the price of what it does with each frame.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

LIMIT = 1 << 27  # frames up to 128 MB


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()
    writer.close()


Pump = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def main(argv: list[str], pump: Pump = pump) -> int:
    """Spawn argv and run `pump` both ways (bench/parse_relay.py passes one that reads)."""
    loop = asyncio.get_running_loop()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stdin), os.fdopen(0, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", buffering=0)
    )
    stdout = asyncio.StreamWriter(transport, protocol, None, loop)
    await asyncio.gather(pump(stdin, proc.stdin), pump(proc.stdout, stdout))
    return await proc.wait()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
