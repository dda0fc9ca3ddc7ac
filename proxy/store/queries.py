"""Read-side queries over the audit log, shared by the CLI (and anything else that reads).

Filters become parameterised WHERE clauses; nothing user-supplied is ever put into SQL text.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

EVENT_COLUMNS = (
    "id, ts, session_id, server, direction, kind, method, rpc_id, tool, size, verdict, "
    "contract, reason, decided_by, detail, latency_ms, trace_id, payload, payload_truncated"
)


@dataclass(frozen=True)
class EventFilter:
    """Which audit rows: every field that is set must match. Shared by the CLI and the app."""

    server: str | None = None
    tool: str | None = None
    verdict: str | None = None
    method: str | None = None
    trace_id: str | None = None
    since: float | None = None
    until: float | None = None
    text: str = ""  # substring of tool, server, method, reason or payload; or a trace id
    decisions_only: bool = False  # only rows that carry a verdict

    def where(self) -> tuple[str, list[Any]]:
        """A parameterised SQL condition ("1" when nothing is filtered) and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("server", self.server),
            ("tool", self.tool),
            ("verdict", self.verdict.lower() if self.verdict else None),
            ("method", self.method),
            ("trace_id", self.trace_id),
        ):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.decisions_only and not self.verdict:
            clauses.append("verdict IS NOT NULL")
        if self.since is not None:
            clauses.append("ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("ts < ?")
            params.append(self.until)
        text = self.text.strip()
        if text:
            pattern = "%" + like_escape(text) + "%"
            # Payloads are stored as JSON text: a quote the user saw is \" there.
            in_json = "%" + like_escape(json.dumps(text, ensure_ascii=False)[1:-1]) + "%"
            clauses.append(
                "(tool LIKE ? ESCAPE '\\' OR server LIKE ? ESCAPE '\\' OR method LIKE ? ESCAPE '\\'"
                " OR reason LIKE ? ESCAPE '\\' OR payload LIKE ? ESCAPE '\\'"
                " OR payload LIKE ? ESCAPE '\\' OR trace_id = ?)"
            )
            params.extend([pattern] * 5 + [in_json, text])
        return (" AND ".join(clauses) or "1"), params


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def tail(conn: sqlite3.Connection, flt: EventFilter, limit: int) -> list[sqlite3.Row]:
    """The last `limit` matching events, oldest first."""
    where, params = flt.where()
    rows = conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM events WHERE {where} ORDER BY id DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    rows.reverse()
    return rows


def after(conn: sqlite3.Connection, flt: EventFilter, last_id: int) -> list[sqlite3.Row]:
    where, params = flt.where()
    return conn.execute(
        f"SELECT {EVENT_COLUMNS} FROM events WHERE {where} AND id > ? ORDER BY id LIMIT 10000",
        [*params, last_id],
    ).fetchall()


def counts(conn: sqlite3.Connection, column: str, flt: EventFilter, limit: int = 20) -> list[Any]:
    if column not in ("server", "method", "verdict", "tool", "kind", "direction"):
        raise ValueError(f"cannot group by {column!r}")
    where, params = flt.where()
    return conn.execute(
        f"SELECT {column} AS key, COUNT(*) AS n FROM events WHERE {where} AND {column} IS NOT NULL "
        f"GROUP BY {column} ORDER BY n DESC LIMIT ?",
        [*params, limit],
    ).fetchall()


def latency_percentiles(
    conn: sqlite3.Connection, flt: EventFilter, quantiles: tuple[float, ...] = (0.5, 0.95)
) -> dict[str, float | None]:
    where, params = flt.where()
    base = f"FROM events WHERE {where} AND latency_ms IS NOT NULL"
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


def session_clients(conn: sqlite3.Connection, session_ids: set[str]) -> dict[str, str]:
    """Each session's client as its clientInfo named it ("claude-code 2.1.3"); sessions whose
    client has not said yet are left out."""
    ids = sorted(session_ids)
    out: dict[str, str] = {}
    for start in range(0, len(ids), 500):  # under SQLite's parameter limit
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT id, client_name, client_version FROM sessions WHERE id IN ({marks}) "
            "AND client_name IS NOT NULL",
            chunk,
        ):
            out[row[0]] = " ".join(part for part in (row[1], row[2]) if part)
    return out
