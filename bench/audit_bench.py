"""What an audit row costs the writer: CPU per row, before and after schema v4, in one run.

    .venv/bin/python bench/audit_bench.py [--sizes 200,4096,65536] [--calls 400] [--batch 20]

Each call is the two rows a proxy writes for a `tools/call` (the request with its argument, the
result with the same text), the text cycling through bench/payloads.py's six kinds. The rows
are built as the audit writer builds them (redaction, bounding to 16 KB), then written in
batches of `--batch` rows, one transaction each, as the writer does:

- `v3`: the v3 schema, whose insert trigger feeds the trigram FTS index on every row;
- `v4 write`: the v4 schema, where an insert only stores the row (what the writer's batch now
  costs on the write path);
- `v4 index`: then indexing those rows in the writer's idle time (proxy.store.fts_index, one
  chunk per transaction), off the write path.

CPU is process time (one thread), per row, best of `--rounds` interleaved rounds. File size is
the database after a checkpoint, per row.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.payloads import KINDS, payload
from proxy.audit import AuditEvent, AuditWriter
from proxy.store import fts_index, schema
from proxy.store.events import INSERT_EVENT


def events(size: int, calls: int) -> list[AuditEvent]:
    out: list[AuditEvent] = []
    for i in range(calls):
        text = payload(KINDS[i % len(KINDS)], size, i)
        out.append(AuditEvent(
            "c2s", "request", method="tools/call", rpc_id=str(i), tool="echo", size=len(text),
            verdict="allow", decided_by="rules", reason="default", payload={
                "jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}}}))
        out.append(AuditEvent(
            "s2c", "response", method="tools/call", rpc_id=str(i), tool="echo", size=len(text),
            payload={"jsonrpc": "2.0", "id": i,
                     "result": {"content": [{"type": "text", "text": text}]}}))
    return out


def open_db(path: Path, version: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    schema.apply_pragmas(conn)
    for step in schema.MIGRATIONS[:version]:
        for statement in schema._statements(step):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    return conn


def cpu(fn: Callable[[], Any]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def write(conn: sqlite3.Connection, rows: list[tuple[Any, ...]], batch: int) -> None:
    for start in range(0, len(rows), batch):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(INSERT_EVENT, rows[start:start + batch])
        conn.execute("COMMIT")


def file_bytes(conn: sqlite3.Connection, path: Path) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return os.path.getsize(path)


def one_round(size: int, calls: int, batch: int, tmp: Path) -> dict[str, float]:
    evs = events(size, calls)
    writer = AuditWriter(tmp / "unused.db", "s1", "bench")
    build = cpu(lambda: writer._rows(evs))
    steps = writer._rows(evs)
    rows = [row for sql, params in steps if sql == INSERT_EVENT for row in params]
    n = len(rows)
    out = {"build": build / n}
    for version in (3, 4):
        path = tmp / f"v{version}.db"
        conn = open_db(path, version)
        out[f"v{version} write"] = cpu(lambda c=conn: write(c, rows, batch)) / n
        if version == 4:
            out["v4 index"] = cpu(lambda c=conn: fts_index.index_all(c)) / n
        out[f"v{version} bytes"] = file_bytes(conn, path) / n
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="200,4096,65536")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--batch", type=int, default=20, help="rows per writer transaction")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    best: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for size in sizes:
                got = one_round(size, args.calls, args.batch, Path(tmp))
                mine = best.setdefault(size, got)
                for key, value in got.items():
                    mine[key] = min(mine[key], value)
    print(f"µs of CPU per audit row, {args.calls * 2} rows in batches of {args.batch}, "
          f"best of {args.rounds}")
    print(f"{'size':>7} {'build':>7} {'v3 write':>9} {'v4 write':>9} {'v4 index':>9} "
          f"{'v3 B/row':>9} {'v4 B/row':>9}")
    for size, got in best.items():
        print(f"{size:>7} {got['build'] * 1e6:7.0f} {got['v3 write'] * 1e6:9.0f} "
              f"{got['v4 write'] * 1e6:9.0f} {got['v4 index'] * 1e6:9.0f} "
              f"{got['v3 bytes']:9.0f} {got['v4 bytes']:9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
