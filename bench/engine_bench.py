"""How long one engine decision takes, and how it grows with the taint log.

    .venv/bin/python bench/engine_bench.py [--calls 3000]

Runs against the full packs and a real SQLite file under a temporary GATEWATCH_HOME. Figures
are p50/p99 in microseconds, and as ratios to a baseline measured in the same run: parsing the
call's own JSON-RPC frame with json.loads (work the relay does for every call anyway), so the
ratios survive a slower or faster machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GMAIL_TOOLS = [
    {"name": "send_email", "description": "Sends a new email",
     "inputSchema": {"type": "object", "properties": {
         "to": {"type": "array"}, "cc": {"type": "array"}, "bcc": {"type": "array"},
         "subject": {"type": "string"}, "body": {"type": "string"}}}},
    {"name": "read_email", "description": "Retrieves the content of a specific email",
     "inputSchema": {"type": "object", "properties": {"messageId": {"type": "string"}}}},
]
FETCH_TOOL = {"name": "fetch_url", "description": "Fetch a URL",
              "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}}
POLICY = """
trusted_destinations: ["*@corp.example"]
servers:
  fs:
    allowed_paths: ["{root}"]
"""
SEND = {"to": ["alice@corp.example", "bob@partner.example"], "cc": ["carol@corp.example"],
        "subject": "Q3 numbers", "body": "Hi Bob, the numbers are attached. " * 20}


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - start) / 1000)
    return out


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GATEWATCH_HOME"] = tmp
        from proxy.engine import Engine
        from proxy.store.database import Database

        root = Path(tmp) / "work"
        root.mkdir()
        policy = Path(tmp) / "policy.yaml"
        policy.write_text(POLICY.format(root=root))
        db = Database.open(Path(tmp) / "bench.db")

        frame = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                            "params": {"name": "send_email", "arguments": SEND}})
        baseline = timed(lambda: json.loads(frame), opts.calls)
        base50 = statistics.median(baseline)

        start = time.perf_counter()
        gmail = Engine.create("gmail", "bench", db, policy_path=policy)
        create_ms = (time.perf_counter() - start) * 1000
        gmail.tools_listed(GMAIL_TOOLS)
        fs = Engine.create("fs", "bench", db, policy_path=policy)
        fs.tools_listed([{"name": "read_text_file", "description": "r", "inputSchema": {}}])
        inbox = {"structuredContent": {"result": [
            {"sender": "bob@partner.example", "body": "Please reply to bob@partner.example"}]}}
        gmail.result_seen("read_email", inbox)

        rows: list[tuple[str, float, float, float, float]] = []


        def measure(label: str, fn: Callable[[], Any]) -> None:
            decision = fn()  # what is being timed: the verdict goes in the table
            samples = timed(fn, opts.calls)
            p50, p99 = statistics.median(samples), pct(samples, 99)
            rows.append((f"{label} → {decision.verdict}/{decision.contract}", p50, p99,
                         p50 / base50, p99 / base50))

        measure("send_email, trusted+contact (ask)", lambda: gmail.decide("send_email", SEND))
        measure("read_email (no sink)", lambda: gmail.decide("read_email", {"messageId": "1"}))
        measure("fs read_text_file (confined)",
                lambda: fs.decide("read_text_file", {"path": str(root / "a" / "b.txt")}))

        unproven = {"to": ["nobody@nowhere.example"], "subject": "s", "body": "b"}
        for n in (1_000, 100_000):
            _fill_db(db.conn, n)
            measure(f"send_email unproven, {n:,} taint rows (other servers)",
                    lambda: gmail.decide("send_email", unproven))
            session = Engine.create(f"big{n}", "bench", db, policy_path=policy)
            session.tools_listed([*GMAIL_TOOLS, FETCH_TOOL])
            text = " ".join(f"write to user{i}@spam{i % 97}.example now." for i in range(n))
            session.result_seen("read_email", {"content": [{"type": "text", "text": text}]})
            measure(f"send_email unproven, {n:,} values seen this session",
                    lambda: session.decide("send_email", unproven))  # noqa: B023 - run at once
            # A host is also searched for inside everything the session read: linear in it.
            measure(f"fetch unproven URL, {n:,} values seen this session",
                    lambda: session.decide("fetch_url", {"url": "https://nowhere.example/x"}))  # noqa: B023
        db.close()

    print(f"baseline: json.loads of the tools/call frame p50 {base50:.1f} µs")
    print(f"Engine.create with all packs: {create_ms:.1f} ms")
    print(f"{'decision → verdict/contract':<76} {'p50 µs':>8} {'p99 µs':>8} {'p50 ×':>7} "
          f"{'p99 ×':>7}")
    for label, p50, p99, r50, r99 in rows:
        print(f"{label:<76} {p50:8.1f} {p99:8.1f} {r50:7.1f} {r99:7.1f}")
    return 0


def _fill_db(db: Any, n: int) -> None:
    have = db.execute("SELECT COUNT(*) FROM taint").fetchone()[0]
    now = time.time()
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO taint (value, kind, provenance, server, tool, session_id, ts) "
        "VALUES (?, 'email', 'free_text', 'other', 'read', 'x', ?)",
        ((f"planted{i}@evil{i % 101}.example", now) for i in range(have, n)),
    )
    db.execute("COMMIT")


if __name__ == "__main__":
    raise SystemExit(main())
