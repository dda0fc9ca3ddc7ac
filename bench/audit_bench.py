"""What an audit row costs the writer: CPU per row, before and after schema v4, in one run.

    .venv/bin/python bench/audit_bench.py [--sizes 200,4096,65536] [--calls 400] [--batch 20]

Each call is the two rows a proxy writes for a `tools/call` (the request with its argument, the
result with the same text), the text cycling through bench/payloads.py's six kinds. The rows
are built as the audit writer builds them (redaction, bounding to 16 KB), then written in
batches of `--batch` rows, one transaction each, as the writer does:

- `v3`: the v3 schema, whose insert trigger feeds the trigram FTS index on every row;
- `v4 rows`: the v4 schema, one INSERT per row (`executemany`) with the statement journal in a
  temporary file, as the writer wrote until session 7;
- `v4 write`: the v4 schema as the writer writes now (proxy.store.writer: up to 32 rows per
  INSERT, statement journals in memory): what the writer's batch costs on the write path;
- `v4 index`: then indexing those rows in the writer's idle time (proxy.store.fts_index, one
  chunk per transaction), off the write path.

CPU is process time (one thread), per row, best of `--rounds` interleaved rounds. `written` is
what the process handed to write() per row (Linux /proc/self/io; the WAL, the statement
journal, checkpoints). File size is the database after a checkpoint, per row.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.payloads import KINDS, payload
from proxy.audit import AuditEvent, AuditWriter
from proxy.store import fts_index, schema
from proxy.store.events import INSERT_EVENT
from proxy.store.writer import EventRows, _write_steps


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
    """One INSERT per row, each batch one transaction (the writer before session 7)."""
    for start in range(0, len(rows), batch):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(INSERT_EVENT, rows[start:start + batch])
        conn.execute("COMMIT")


def write_now(conn: sqlite3.Connection, rows: list[tuple[Any, ...]], batch: int) -> None:
    """As the audit writer writes a batch now."""
    for start in range(0, len(rows), batch):
        _write_steps(conn, [EventRows(rows[start:start + batch])])


def written() -> int:
    """Bytes this process has handed to write() so far (Linux; 0 elsewhere)."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return 0
    return next(int(line.split()[1]) for line in text.splitlines() if line.startswith("wchar"))


def cpu_written(fn: Callable[[], Any]) -> tuple[float, int]:
    before = written()
    took = cpu(fn)
    return took, written() - before


def file_bytes(conn: sqlite3.Connection, path: Path) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return os.path.getsize(path)


def one_round(size: int, calls: int, batch: int, tmp: Path) -> dict[str, float]:
    evs = events(size, calls)
    writer = AuditWriter(tmp / "unused.db", "s1", "bench")
    build = cpu(lambda: writer._rows(evs))
    steps = writer._rows(evs)
    rows = [row for step in steps if isinstance(step, EventRows) for row in step.rows]
    n = len(rows)
    out = {"build": build / n}
    for name, version, how in (("v3", 3, write), ("v4 rows", 4, write), ("v4", 4, write_now)):
        path = tmp / f"v{version}.db"
        conn = open_db(path, version)
        if how is write_now:
            conn.execute("PRAGMA temp_store = MEMORY")  # as proxy.store.writer opens it
        took, wrote = cpu_written(partial(how, conn, rows, batch))
        out[f"{name} write"], out[f"{name} written"] = took / n, wrote / n
        if how is write_now:
            out["v4 index"] = cpu(partial(fts_index.index_all, conn)) / n
        out[f"{name} bytes"] = file_bytes(conn, path) / n
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
    print(f"{'size':>7} {'build':>6} {'v3 write':>9} {'v4 rows':>8} {'v4 write':>9} "
          f"{'v4 index':>9} {'written: v4 rows':>17} {'v4':>7} {'file: v3 B/row':>15} {'v4':>6}")
    for size, got in best.items():
        print(f"{size:>7} {got['build'] * 1e6:6.0f} {got['v3 write'] * 1e6:9.0f} "
              f"{got['v4 rows write'] * 1e6:8.0f} {got['v4 write'] * 1e6:9.0f} "
              f"{got['v4 index'] * 1e6:9.0f} {got['v4 rows written']:17.0f} "
              f"{got['v4 written']:7.0f} {got['v3 bytes']:15.0f} {got['v4 bytes']:6.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
