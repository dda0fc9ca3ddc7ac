"""Recent decisions and their counts, read from the audit log (read-only, parameterised)."""

from __future__ import annotations

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
    from proxy.store.database import Database

    store = Database.open(db, readonly=True)
    try:
        events = store.events
        by_verdict = events.decision_counts("verdict", since, server)
        summary["by_verdict"] = by_verdict
        summary["total_decisions"] = sum(by_verdict.values())
        summary["by_server"] = events.decision_counts("server", since, server)
        summary["top_denied_tools"] = [
            {"server": s, "tool": t, "count": n}
            for s, t, n in events.top_denied_tools(since, server)
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
            for row in events.recent_decisions(since, server, limit)
        ]
    finally:
        store.close()
    return summary


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")
