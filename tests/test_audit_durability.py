"""The audit log survives a SIGKILLed proxy and several proxies writing at once."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.relay_pipes import RawProxy, echo_upstream, query, wait_for

pytestmark = pytest.mark.e2e

# The writer commits every 0.05 s window; a frame acknowledged this long before the kill must
# be on disk. The slack (20 windows) absorbs a shared, busy machine, not a design allowance.
GRACE = 1.0


async def test_sigkill_while_writing_keeps_a_sound_log_with_all_acknowledged_frames(
    db_file: Path,
) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    acked: dict[int, float] = {}  # request id -> when its answer reached the client
    sent = 0
    stop = asyncio.Event()

    async def send() -> None:
        nonlocal sent
        while not stop.is_set():
            if sent - len(acked) < 20:  # keep up to 20 requests in flight
                sent += 1
                await proxy.send({"jsonrpc": "2.0", "id": sent, "method": "ping"})
            else:
                await asyncio.sleep(0.001)

    async def receive() -> None:
        assert proxy.proc.stdout is not None
        while line := await proxy.proc.stdout.readline():
            acked[json.loads(line)["id"]] = time.monotonic()

    tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
    try:
        # Kill only once plenty of frames are older than the grace period, mid-stream.
        await wait_for(
            lambda: sum(t < time.monotonic() - GRACE for t in acked.values()) >= 200,
            timeout=60,
            what="200 frames acknowledged more than GRACE ago",
        )
        killed_at = time.monotonic()
        proxy.proc.kill()
        assert await proxy.wait() == -9
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await proxy.kill()

    must_have = {i for i, t in acked.items() if t < killed_at - GRACE}
    assert len(must_have) >= 200
    # The kill landed mid-traffic: frames were still being answered within the last GRACE.
    assert any(t >= killed_at - GRACE for t in acked.values())

    assert [tuple(r) for r in query(db_file, "PRAGMA quick_check")] == [("ok",)]
    rows = query(db_file, "SELECT direction, rpc_id FROM events WHERE kind != 'lifecycle'")
    logged = {d: {int(r["rpc_id"]) for r in rows if r["direction"] == d} for d in ("c2s", "s2c")}
    assert must_have <= logged["c2s"] and must_have <= logged["s2c"]
    # Batches commit whole and in order: what survived is a gap-free prefix in each direction.
    for ids in logged.values():
        assert ids == set(range(1, len(ids) + 1))
    (session,) = query(db_file, "SELECT ended_at, exit_code FROM sessions")
    assert tuple(session) == (None, None)  # the crash shows: the session never ended


async def test_two_proxies_writing_one_database_lose_no_rows(db_file: Path) -> None:
    n = 400

    async def drive(name: str) -> int:
        proxy = await RawProxy.start(db_file, echo_upstream(), name=name)
        try:
            batch = b"".join(
                json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n"
                for i in range(n)
            )
            await proxy.send_raw(batch)  # pipelined: the whole burst at once
            answers = [await proxy.recv() for _ in range(n)]
            assert sorted(a["id"] for a in answers) == list(range(n))
            proxy.close_stdin()
            return await proxy.wait()
        finally:
            await proxy.kill()

    assert await asyncio.gather(drive("one"), drive("two")) == [0, 0]
    counts = query(
        db_file,
        "SELECT server, direction, COUNT(DISTINCT rpc_id) AS ids, COUNT(*) AS n FROM events "
        "WHERE kind != 'lifecycle' GROUP BY server, direction ORDER BY server, direction",
    )
    assert [tuple(r) for r in counts] == [
        ("one", "c2s", n, n),
        ("one", "s2c", n, n),
        ("two", "c2s", n, n),
        ("two", "s2c", n, n),
    ]
    ended = query(db_file, "SELECT server, exit_code FROM sessions ORDER BY server")
    assert [tuple(r) for r in ended] == [("one", 0), ("two", 0)]


async def test_proxy_waits_for_a_locked_database_instead_of_dropping(db_file: Path) -> None:
    """Another process holding the write lock for a while delays the audit, loses nothing."""
    import sqlite3

    from proxy.store.schema import connect

    connect(db_file).close()
    proxy = await RawProxy.start(db_file, echo_upstream())
    blocker = sqlite3.connect(db_file, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        for i in range(50):
            assert (await proxy.request(i, "ping"))["result"] == {"ok": True}
        blocker.execute("COMMIT")
        await wait_for(
            lambda: (
                query(db_file, "SELECT COUNT(*) FROM events WHERE rpc_id IS NOT NULL")[0][0] == 100
            ),
            what="the audit to catch up once the lock is released",
        )
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        blocker.close()
        await proxy.kill()
