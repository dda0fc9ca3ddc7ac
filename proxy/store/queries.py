"""Read-side queries over the audit log, shared by the CLI (and anything else that reads).

Filters become parameterised WHERE clauses; nothing user-supplied is ever put into SQL text.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

EVENT_COLUMNS = (
    "id, ts, session_id, server, direction, kind, method, rpc_id, tool, size, verdict, "
    "contract, reason, decided_by, detail, latency_ms, trace_id, payload, payload_truncated"
)


@dataclass
class EventFilter:
    server: str | None = None
    verdict: str | None = None
    method: str | None = None
    tool: str | None = None
    trace_id: str | None = None
    since: float | None = None
    until: float | None = None
    text: str | None = None  # substring of reason, tool, method or payload

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("server", self.server),
            ("verdict", self.verdict.lower() if self.verdict else None),
            ("method", self.method),
            ("tool", self.tool),
            ("trace_id", self.trace_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.since is not None:
            clauses.append("ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("ts < ?")
            params.append(self.until)
        if self.text:
            pattern = "%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern += "%"
            clauses.append(
                "(reason LIKE ? ESCAPE '\\' OR tool LIKE ? ESCAPE '\\' OR method LIKE ? ESCAPE '\\'"
                " OR payload LIKE ? ESCAPE '\\')"
            )
            params.extend([pattern] * 4)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def tail(conn: sqlite3.Connection, flt: EventFilter, limit: int) -> list[sqlite3.Row]:
    """The last `limit` matching events, oldest first."""
    where, params = flt.where()
    rows = conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM events{where} ORDER BY id DESC LIMIT ?", [*params, limit]
    ).fetchall()
    rows.reverse()
    return rows


def after(conn: sqlite3.Connection, flt: EventFilter, last_id: int) -> list[sqlite3.Row]:
    where, params = flt.where()
    glue = " AND " if where else " WHERE "
    return conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM events{where}{glue}id > ? ORDER BY id LIMIT 10000",
        [*params, last_id],
    ).fetchall()


def counts(conn: sqlite3.Connection, column: str, flt: EventFilter, limit: int = 20) -> list[Any]:
    if column not in ("server", "method", "verdict", "tool", "kind", "direction"):
        raise ValueError(f"cannot group by {column!r}")
    where, params = flt.where()
    glue = " AND " if where else " WHERE "
    return conn.execute(
        f"SELECT {column} AS key, COUNT(*) AS n FROM events{where}{glue}{column} IS NOT NULL "
        f"GROUP BY {column} ORDER BY n DESC LIMIT ?",
        [*params, limit],
    ).fetchall()


def latency_percentiles(
    conn: sqlite3.Connection, flt: EventFilter, quantiles: tuple[float, ...] = (0.5, 0.95)
) -> dict[str, float | None]:
    where, params = flt.where()
    glue = " AND " if where else " WHERE "
    base = f"FROM events{where}{glue}latency_ms IS NOT NULL"
    total = conn.execute(f"SELECT COUNT(*) {base}", params).fetchone()[0]
    out: dict[str, float | None] = {}
    for q in quantiles:
        key = f"p{round(q * 100)}"
        if not total:
            out[key] = None
            continue
        offset = min(total - 1, int(q * total))
        row = conn.execute(
            f"SELECT latency_ms {base} ORDER BY latency_ms LIMIT 1 OFFSET ?", [*params, offset]
        ).fetchone()
        out[key] = row[0]
    return out
