"""proxy.relay.framing: lines come out whole, oversize lines in bounded pieces, nothing lost."""

from __future__ import annotations

import asyncio
import random

from proxy.relay.framing import READ_SIZE, Line, Piece, read_frames


class ChunkReader(asyncio.StreamReader):
    """Hands out exactly the given chunks, one per read, as a pipe would."""

    def __init__(self, chunks: list[bytes]) -> None:
        super().__init__()
        self.chunks = [c for c in chunks if c]

    async def read(self, n: int = -1) -> bytes:
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if 0 < n < len(chunk):
            chunk, rest = chunk[:n], chunk[n:]
            self.chunks.insert(0, rest)
        return chunk


async def frames(chunks: list[bytes], max_line: int) -> list[Line | Piece]:
    return [frame async for frame in read_frames(ChunkReader(chunks), max_line)]


def lines(out: list[Line | Piece]) -> list[bytes]:
    assert all(isinstance(f, Line) for f in out), out
    return [f.data for f in out]


async def test_lines_split_across_reads_and_sharing_reads() -> None:
    out = await frames([b'{"a":', b"1}\n{", b'"b":2}\n{"c":3}\n'], max_line=1024)
    assert lines(out) == [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n']


async def test_last_line_without_newline_is_kept() -> None:
    out = await frames([b'{"a":1}\n{"b":2}'], max_line=1024)
    assert lines(out) == [b'{"a":1}\n', b'{"b":2}']


async def test_empty_stream_and_blank_lines() -> None:
    assert await frames([], max_line=10) == []
    assert lines(await frames([b"\n\n"], max_line=10)) == [b"\n", b"\n"]


async def test_oversize_line_comes_out_in_pieces_then_lines_resume() -> None:
    big = b"x" * 5000 + b"\n"
    chunks = [big[i : i + 700] for i in range(0, len(big), 700)] + [b'{"after":1}\n']
    out = await frames(chunks, max_line=1000)
    pieces = [f for f in out if isinstance(f, Piece)]
    assert pieces[0].first and not pieces[0].last
    assert pieces[-1].last and not any(p.last for p in pieces[:-1])
    assert not any(p.first for p in pieces[1:])
    assert b"".join(p.data for p in pieces) == big
    assert out[-1] == Line(b'{"after":1}\n')


async def test_oversize_line_at_eof_without_newline() -> None:
    out = await frames([b"y" * 3000], max_line=1000)
    assert isinstance(out[-1], Piece) and out[-1].last
    assert b"".join(f.data for f in out) == b"y" * 3000


async def test_random_streams_are_reassembled_exactly_with_bounded_frames() -> None:
    rng = random.Random(7)
    max_line = 2000
    for _ in range(30):
        body = b"".join(
            b"z" * rng.choice([0, 1, 50, 1999, 2000, 2001, 9000]) + b"\n"
            for _ in range(rng.randint(1, 12))
        )
        if rng.random() < 0.3:
            body += b"tail-without-newline"
        cuts = sorted(rng.sample(range(1, len(body)), min(8, len(body) - 1)))
        chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
        out = await frames(chunks, max_line)
        assert b"".join(f.data for f in out) == body
        # Memory stays bounded: nothing larger than the limit plus one read is ever held.
        assert all(len(f.data) <= max_line + READ_SIZE for f in out)
        # Every complete line ends where the input's line ended.
        assert all(f.data.endswith(b"\n") for f in out[:-1] if isinstance(f, Line))
        in_piece = False
        for f in out:
            if isinstance(f, Piece):
                assert f.first != in_piece  # a run starts with first=True, never nests
                in_piece = not f.last
            else:
                assert not in_piece  # a Line never interrupts an oversize run


async def test_frames_from_a_real_pipe_come_out_whole_in_small_reads() -> None:
    """Through asyncio's own pipe transport, which now reads at most 64 KiB at a time (not 256
    KiB, an mmap per read): frames larger than a read, and many small ones, come out exact."""
    import os

    from proxy.relay.framing import TRANSPORT_READ

    loop = asyncio.get_running_loop()
    rfd, wfd = os.pipe()
    reader = asyncio.StreamReader(limit=1 << 20)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(rfd, "rb", buffering=0))
    rng = random.Random(7)
    sent = [bytes(rng.choice(b"abc{}\"") for _ in range(size)) + b"\n"
            for size in (10, 300_000, 5, TRANSPORT_READ - 1, TRANSPORT_READ, 3 * TRANSPORT_READ)]

    def write_all() -> None:
        with os.fdopen(wfd, "wb") as out:
            for line in sent:
                out.write(line)

    writing = asyncio.create_task(asyncio.to_thread(write_all))
    try:
        got = [f async for f in read_frames(reader, 1 << 20)]
    finally:
        await writing
        transport.close()
    assert lines(got) == sent
    assert transport.max_size == TRANSPORT_READ  # type: ignore[attr-defined]
