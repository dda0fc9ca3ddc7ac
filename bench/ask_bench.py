"""Cost of the ask chain's machinery, as ratios against baselines measured in the same run.

  python bench/ask_bench.py [--n 2000]

1. An AppLink with no app running (it keeps retrying in the background) must not slow the
   event loop: loop throughput with the link / without it (1.0 means no cost).
2. `AppLink.ask()` with no app must return at once: its cost / one bare `await` of a finished
   future.
3. A remembered grant (the chain's first step, one indexed SQLite lookup): cost / one bare
   `SELECT 1` on the same connection.
4. A question answered over the real socket by an in-process server: round trip / one
   `asyncio.sleep(0)`, to show the order of magnitude only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any


async def timed(n: int, step: Callable[[], Awaitable[Any]]) -> float:
    """Median seconds per call over 5 rounds of n calls."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            await step()
        rounds.append((time.perf_counter() - t0) / n)
    return statistics.median(rounds)


async def loop_throughput(seconds: float) -> float:
    """How many zero-sleeps the loop turns per second (what a busy relay would feel)."""
    count = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        await asyncio.sleep(0)
        count += 1
    return count / seconds


async def main(n: int) -> None:
    from proxy.ask import AskChain, AskRequest
    from proxy.decision import Decision
    from proxy.ipc import protocol
    from proxy.ipc.client import AppLink
    from proxy.ipc.server import SocketServer
    from proxy.settings import Settings
    from proxy.store.database import Database

    hello = protocol.proxy_hello(session_id="bench", server="mail", pid=os.getpid(),
                                 command=["bench"], started_at=time.time())

    base = await loop_throughput(1.0)
    link = AppLink(hello)  # no app: it retries in the background at its real pace
    link.start()
    with_link = await loop_throughput(1.0)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    done.set_result(None)

    async def bare() -> None:
        await done

    async def no_app() -> None:
        await link.ask({"ask_id": "x"}, 60)

    t_bare = await timed(n, bare)
    t_no_app = await timed(n, no_app)
    await link.close()

    db = Database.open(Path(os.environ["GATEWATCH_HOME"]) / "bench.db")
    chain = AskChain.create("mail", "bench", db, Settings(), app_link=None)
    chain.trust.add("mail", "send_email", "alice@example.com")
    req = AskRequest("send_email", {"to": "alice@example.com"},
                     Decision("ask", "sink_gate", "bench", "alice@example.com"))

    class Channel:
        def __init__(self) -> None:
            self.era = "handshake"
            self.elicitation_modes: set[str] = set()
            self.client_info = None
            self.cancelled = asyncio.Event()

        async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
            raise AssertionError("not reached")

    channel = Channel()

    async def select_one() -> None:
        db.conn.execute("SELECT 1").fetchone()

    async def trusted() -> None:
        outcome = await chain.resolve(req, channel)  # type: ignore[arg-type]
        assert outcome.decided_by == "trust"

    t_select = await timed(n, select_one)
    t_trust = await timed(n, trusted)

    async def yes(message: dict[str, Any]) -> dict[str, Any]:
        return {"allow": True, "remember": "once", "expires_in_s": None}

    server = SocketServer(yes)
    await server.start()
    link = AppLink(hello, reconnect_s=0.05)
    link.start()
    assert await link.wait_connected(10)
    ids = iter(range(10**9))

    async def round_trip() -> None:
        assert await link.ask({"ask_id": f"b-{next(ids)}"}, 10)

    async def zero() -> None:
        await asyncio.sleep(0)

    t_zero = await timed(n, zero)
    t_round = await timed(max(n // 10, 50), round_trip)
    await link.close()
    await server.close()

    print(f"loop throughput with a retrying AppLink / without: {with_link / base:.3f}")
    print(f"AppLink.ask with no app / bare await: {t_no_app / t_bare:.1f}x "
          f"({t_no_app * 1e6:.1f} us)")
    print(f"trust-step resolve / SELECT 1: {t_trust / t_select:.1f}x ({t_trust * 1e6:.1f} us)")
    print(f"socket ask round trip / sleep(0): {t_round / t_zero:.0f}x ({t_round * 1e6:.0f} us)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gwb") as home:
        os.environ["GATEWATCH_HOME"] = home
        asyncio.run(main(args.n))
