"""Recent decisions and their counts, read from the audit log (read-only, parameterised)."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MAX_LIMIT = 500


def summarize(
    db: Path, *, limit: int = 20, hours: float = 24.0, server: str | None = None
) -> dict[str, Any]:
    """Counts by verdict, server and tool since `hours` ago, plus the `limit` latest decisions."""
    limit = max(0, min(limit, MAX_LIMIT))
    since = time.time() - hours * 3600
    summary: dict[str, Any] = {
        "database": str(db),
        "since": _iso(since),
        "server": server,
        "total_decisions": 0,
        "by_verdict": {},
        "by_server": {},
        "top_denied_tools": [],
        "recent": [],
    }
    if not db.exists():
        return summary
    from proxy.store.schema import connect

    conn = connect(db, readonly=True)
    try:
        where = "verdict IS NOT NULL AND ts >= ? AND (? IS NULL OR server = ?)"
        params: tuple[Any, ...] = (since, server, server)
        by_verdict = _pairs(conn, f"SELECT verdict, COUNT(*) FROM events WHERE {where} "
                            "GROUP BY verdict ORDER BY 2 DESC", params)
        summary["by_verdict"] = by_verdict
        summary["total_decisions"] = sum(by_verdict.values())
        summary["by_server"] = _pairs(conn, f"SELECT server, COUNT(*) FROM events WHERE {where} "
                                      "GROUP BY server ORDER BY 2 DESC", params)
        summary["top_denied_tools"] = [
            {"server": row[0], "tool": row[1], "count": row[2]}
            for row in conn.execute(
                f"SELECT server, tool, COUNT(*) FROM events WHERE {where} "
                "AND verdict IN ('deny', 'block') GROUP BY server, tool "
                "ORDER BY 3 DESC, 1, 2 LIMIT 10",
                params,
            )
        ]
        summary["recent"] = [
            {
                "time": _iso(row["ts"]),
                "server": row["server"],
                "tool": row["tool"],
                "method": row["method"],
                "verdict": row["verdict"],
                "contract": row["contract"],
                "reason": row["reason"],
                "decided_by": row["decided_by"],
                "latency_ms": row["latency_ms"],
                "trace_id": row["trace_id"],
            }
            for row in conn.execute(
                "SELECT ts, server, tool, method, verdict, contract, reason, decided_by, "
                f"latency_ms, trace_id FROM events WHERE {where} ORDER BY ts DESC, id DESC "
                "LIMIT ?",
                (*params, limit),
            )
        ]
    finally:
        conn.close()
    return summary


def _pairs(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> dict[str, int]:
    return {str(row[0]): int(row[1]) for row in conn.execute(sql, params)}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")
