"""Does the History tab stay fast with a million audit rows? Ratios against baselines.

  python bench/app_history_bench.py [--rows 1000000]

Baseline: the cheapest possible page, `SELECT ... FROM events ORDER BY id DESC LIMIT 256` on the
same file. Each History query (first page, a page deep in the scroll, each indexed filter, free
text, a live-update poll) is reported as its median time / the baseline. A ratio near 1 means
the query costs what reading one page costs, whatever the table size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import history_query as hq
from proxy.store import schema


def fill(path: Path, rows: int) -> None:
    conn = schema.connect(path)
    rnd = random.Random(1)
    servers = [f"server{i}" for i in range(12)]
    tools = [f"tool{i}" for i in range(40)]
    verdicts = ["allow"] * 17 + ["deny", "ask", None]
    t0 = time.time() - rows
    conn.execute("BEGIN")
    batch = []
    for i in range(rows):
        batch.append((t0 + i, "s", rnd.choice(servers), "c2s", "request", "tools/call",
                      rnd.choice(tools), rnd.choice(verdicts), f"reason {i % 977}",
                      json.dumps({"arguments": {"to": f"user{i % 5000}@example.com"}})))
        if len(batch) == 10_000:
            conn.executemany(
                "INSERT INTO events (ts, session_id, server, direction, kind, method, tool, "
                "verdict, reason, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
            batch.clear()
    if batch:
        conn.executemany(
            "INSERT INTO events (ts, session_id, server, direction, kind, method, tool, "
            "verdict, reason, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
    conn.execute("COMMIT")
    conn.close()


def median_s(fn: Callable[[], object], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gatewatch.db"
        t0 = time.perf_counter()
        fill(path, args.rows)
        print(f"filled {args.rows:,} rows in {time.perf_counter() - t0:.1f} s "
              f"({os.path.getsize(path) / 1e6:.0f} MB)")
        conn = schema.connect(path)
        baseline = median_s(lambda: conn.execute(
            f"SELECT {', '.join(hq.COLUMNS)} FROM events ORDER BY id DESC LIMIT 256").fetchall())
        deep = hq.page(conn, hq.HistoryFilter(), None, limit=1)[0]
        middle_ts = conn.execute("SELECT ts, id FROM events WHERE id = ?",
                                 (args.rows // 2,)).fetchone()
        cases: dict[str, Callable[[], object]] = {
            "first page, no filter": lambda: hq.page(conn, hq.HistoryFilter()),
            "page in the middle (keyset)": lambda: hq.page(conn, hq.HistoryFilter(),
                                                           (middle_ts[0], middle_ts[1])),
            "server filter": lambda: hq.page(conn, hq.HistoryFilter(server="server3")),
            "tool filter": lambda: hq.page(conn, hq.HistoryFilter(tool="tool7")),
            "verdict = deny": lambda: hq.page(conn, hq.HistoryFilter(verdict="deny")),
            "last hour": lambda: hq.page(conn, hq.HistoryFilter(since=deep[1] - 3600)),
            "server + verdict": lambda: hq.page(conn, hq.HistoryFilter(server="server3",
                                                                       verdict="deny")),
            "free text (1 row in 5000)": lambda: hq.page(conn, hq.HistoryFilter(text="user42@")),
            "live poll, nothing new": lambda: hq.max_id(conn),
            "distinct tools (filter menu)": lambda: hq.distinct_values(conn, "tool"),
        }
        print(f"baseline page: {baseline * 1000:.2f} ms")
        print(f"{'query':<32} {'ratio':>8}")
        for name, fn in cases.items():
            print(f"{name:<32} {median_s(fn) / baseline:8.2f}")
        rare = median_s(lambda: hq.page(conn, hq.HistoryFilter(text="no such text")), repeat=3)
        print(f"{'free text (no match, full scan)':<32} {rare / baseline:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
