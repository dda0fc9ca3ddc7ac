"""Does the History tab stay fast with a million audit rows? Milliseconds, and ratios.

  python bench/app_history_bench.py [--rows 1000000] [--migrate]

The file is filled the way proxies fill it (through the schema's triggers, so the cost of
keeping the outcome columns up to date is measured too), then indexed for search as the audit
writer indexes it off the write path (proxy.store.fts_index, timed apart): each call is its
request row plus a result frame; every asked call gets its answer frame but one in ten,
which still waits. The text searches are timed again with `INDEX_LAG` newer rows of 16 KB
payloads not indexed yet (the most a busy writer leaves for a search to scan).
Each History query is timed (median of repeats) and shown as milliseconds and as a ratio to
the cheapest possible page, `SELECT ... FROM events ORDER BY id DESC LIMIT 256`. The goal is
every query under 100 ms. `--migrate` also times upgrading a schema-v1 file and a schema-v3 file
of the same size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import history_query as hq
from bench.payloads import payload
from proxy.store import fts_index, schema

INSERT = (
    "INSERT INTO events (ts, session_id, server, direction, kind, method, rpc_id, tool, "
    "verdict, decided_by, reason, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def frames(rows: int) -> Iterator[tuple[object, ...]]:
    rnd = random.Random(1)
    servers = [f"server{i}" for i in range(12)]
    tools = [f"tool{i}" for i in range(40)]
    t0 = time.time() - rows
    made = 0
    call = 0
    while made < rows:
        call += 1
        ts = t0 + made
        server, tool = rnd.choice(servers), rnd.choice(tools)
        verdict = rnd.choice(["allow"] * 17 + ["deny", "ask", "ask"])
        session = f"s{call // 500}"
        rpc = str(call % 500)
        args = {"to": f"user{call % 5000}@example.com", "body": f"report {call % 977}"}
        yield (ts, session, server, "c2s", "request", "tools/call", rpc, tool, verdict, "rules",
               f"reason {call % 977}",
               json.dumps({"jsonrpc": "2.0", "id": call, "method": "tools/call",
                           "params": {"name": tool, "arguments": args}}))
        made += 1
        if verdict == "ask" and call % 10 and made < rows:  # every tenth ask still waits
            allow = call % 3 != 0
            yield (ts + 0.2, session, server, "gw", "decision", "tools/call", rpc, tool,
                   "allow" if allow else "deny", "app" if allow else "timeout",
                   "allowed in the Gatewatch app" if allow else "no answer within 60 s", None)
            made += 1
        if verdict != "deny" and made < rows:
            yield (ts + 0.5, session, server, "s2c", "response", "tools/call", rpc, tool, None,
                   None, None, json.dumps({"result": {"content": [
                       {"type": "text", "text": f"sent to {args['to']} (message {call})"}]}}))
            made += 1


def fill(conn: sqlite3.Connection, rows: int) -> None:
    conn.execute("BEGIN")
    batch: list[tuple[object, ...]] = []
    for frame in frames(rows):
        batch.append(frame)
        if len(batch) == 10_000:
            conn.executemany(INSERT, batch)
            batch.clear()
    if batch:
        conn.executemany(INSERT, batch)
    conn.execute("COMMIT")


def median_s(fn: Callable[[], object], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def migrate(path: Path, rows: int, version: int) -> float:
    """Fill a file at an older schema version, then time connect() taking it to the current
    one."""
    old = sqlite3.connect(path, isolation_level=None)
    for step in schema.MIGRATIONS[:version]:
        for statement in schema._statements(step):
            old.execute(statement)
    old.execute(f"PRAGMA user_version = {version}")
    fill(old, rows)
    old.close()
    t0 = time.perf_counter()
    schema.connect(path).close()
    return time.perf_counter() - t0


def add_unindexed_tail(conn: sqlite3.Connection, rows: int) -> None:
    """`rows` newer calls with 16 KB payloads, written but not indexed yet."""
    t0 = time.time()
    conn.execute("BEGIN")
    conn.executemany(INSERT, [
        (t0 + i, "tail", "server0", "c2s", "request", "tools/call", str(i), "tool0", "allow",
         "rules", "default", json.dumps({"params": {"arguments": {
             "text": payload("prose", 16 * 1024, i)}}}))
        for i in range(rows)])
    conn.execute("COMMIT")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--migrate", action="store_true",
                        help="also time the upgrades of v1 and v3 files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gatewatch.db"
        conn = schema.connect(path)
        t0 = time.perf_counter()
        fill(conn, args.rows)
        took = time.perf_counter() - t0
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        print(f"filled {args.rows:,} rows in {took:.1f} s ({took / args.rows * 1e6:.0f} µs a row,"
              " triggers included)")
        t0 = time.perf_counter()
        fts_index.index_all(conn)
        took = time.perf_counter() - t0
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        print(f"indexed them for search in {took:.1f} s ({took / args.rows * 1e6:.0f} µs a row, "
              f"off the write path); file {os.path.getsize(path) / 1e6:.0f} MB")
        baseline = median_s(lambda: conn.execute(
            "SELECT id, ts, server, tool FROM events ORDER BY id DESC LIMIT 256").fetchall())
        history = hq.History(conn)
        top = history.page(hq.HistoryFilter(), None, limit=1)[0]
        middle = conn.execute("SELECT ts, id FROM events WHERE id = ?",
                              (args.rows // 2,)).fetchone()
        open_calls = [r.id for r in history.page(hq.HistoryFilter(verdict="ask"), limit=50)]
        some_call = history.page(hq.HistoryFilter(), (middle[0], middle[1]), limit=1)[0].id
        calls = hq.HistoryFilter
        cases: dict[str, Callable[[], object]] = {
            "calls: first page": lambda: history.page(calls()),
            "calls: page in the middle": lambda: history.page(calls(), (middle[0], middle[1])),
            "calls: server": lambda: history.page(calls(server="server3")),
            "calls: tool": lambda: history.page(calls(tool="tool7")),
            "calls: outcome = denied": lambda: history.page(calls(verdict="deny")),
            "calls: outcome = waiting": lambda: history.page(calls(verdict="ask")),
            "calls: last hour": lambda: history.page(calls(since=top.ts - 3600)),
            "calls: server + outcome": lambda: history.page(calls(server="server3",
                                                                   verdict="deny")),
            "calls: server + tool": lambda: history.page(calls(server="server3", tool="tool7")),
            "calls: text, 1 call in 5000": lambda: history.page(calls(text="user42@")),
            "calls: text, in every call": lambda: history.page(calls(text="example.com")),
            "calls: text, no match": lambda: history.page(calls(text="no such text")),
            "calls: text + server": lambda: history.page(calls(text="user42@",
                                                                server="server3")),
            "calls: text, next page": lambda: history.page(calls(text="example.com"),
                                                      (middle[0], middle[1])),
            "frames: first page": lambda: history.page(calls(all_frames=True)),
            "frames: server + verdict": lambda: history.page(calls(all_frames=True,
                                                                    server="server3",
                                                                    verdict="deny")),
            "frames: text, 1 in 5000": lambda: history.page(calls(all_frames=True,
                                                                   text="user42@")),
            "frames: text, no match": lambda: history.page(calls(all_frames=True,
                                                                  text="no such text")),
            "live poll, nothing new": lambda: history.max_id(),
            "live poll, re-read 50 waiting": lambda: history.reread(open_calls),
            "detail: a call's frames": lambda: history.call_frames(some_call),
            "filter menu: distinct tools": lambda: history.distinct_values("tool"),
        }
        print(f"baseline page: {baseline * 1000:.2f} ms")
        print(f"{'query':<34} {'ms':>8} {'ratio':>8}")
        worst = 0.0
        for name, fn in cases.items():
            t = median_s(fn)
            worst = max(worst, t)
            print(f"{name:<34} {t * 1000:8.2f} {t / baseline:8.1f}")
        short = median_s(lambda: history.page(calls(text="zq")), repeat=3)
        label = f"(2-char text: scans the newest {hq.SHORT_TEXT_ROWS:,})"
        print(f"{label:<34} {short * 1000:8.1f} {short / baseline:8.1f}")
        print(f"slowest indexed query: {worst * 1000:.1f} ms")
        add_unindexed_tail(conn, fts_index.INDEX_LAG)
        print(f"with {fts_index.pending(conn):,} newer rows of 16 KB payloads not indexed yet:")
        for name, fn in cases.items():
            if "text" in name:
                t = median_s(fn)
                print(f"{name:<34} {t * 1000:8.2f} {t / baseline:8.1f}")
        conn.close()
        if args.migrate:
            for version in (1, 3):
                took = migrate(Path(tmp) / f"v{version}.db", args.rows, version)
                print(f"upgrading a v{version} file of {args.rows:,} rows to "
                      f"v{schema.SCHEMA_VERSION}: {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
