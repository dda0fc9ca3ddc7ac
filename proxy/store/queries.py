"""Read-side queries over the audit log, shared by the CLI (and anything else that reads).

Filters become parameterised WHERE clauses; nothing user-supplied is ever put into SQL text.
"""

from __future__ import annotations

import json
import sqlite3
import time
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

    def where(self, prefix: str = "", *, text: bool = True) -> tuple[str, list[Any]]:
        """A parameterised SQL condition ("1" when nothing is filtered) and its parameters.

        `prefix` qualifies the columns (e.g. "e." in a join); `text=False` leaves the free
        text out, for callers that match it through the FTS index (see `fts_query`)."""
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
                clauses.append(f"{prefix}{column} = ?")
                params.append(value)
        if self.decisions_only and not self.verdict:
            clauses.append(f"{prefix}verdict IS NOT NULL")
        if self.since is not None:
            clauses.append(f"{prefix}ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{prefix}ts < ?")
            params.append(self.until)
        if text and self.text.strip():
            clause, args = like_clause(self.text, prefix)
            clauses.append(clause)
            params.extend(args)
        return (" AND ".join(clauses) or "1"), params


def like_clause(text: str, prefix: str = "") -> tuple[str, list[Any]]:
    """Substring of tool, server, method, reason or payload, or an exact trace id (a scan)."""
    text = text.strip()
    pattern = "%" + like_escape(text) + "%"
    # Payloads are stored as JSON text: a quote the user saw is \" there.
    in_json = "%" + like_escape(json.dumps(text, ensure_ascii=False)[1:-1]) + "%"
    p = prefix
    clause = (
        f"({p}tool LIKE ? ESCAPE '\\' OR {p}server LIKE ? ESCAPE '\\'"
        f" OR {p}method LIKE ? ESCAPE '\\' OR {p}reason LIKE ? ESCAPE '\\'"
        f" OR {p}payload LIKE ? ESCAPE '\\' OR {p}payload LIKE ? ESCAPE '\\'"
        f" OR {p}trace_id = ?)"
    )
    return clause, [*[pattern] * 5, in_json, text]


# The trigram index (schema v2, events_fts) finds substrings of at least this many characters.
FTS_MIN_CHARS = 3


def fts_query(text: str) -> str | None:
    """An FTS5 query for the same substring search as `like_clause`, or None when the text is
    too short for the trigram index. Both the text and its JSON-escaped form (how a payload
    stores a quote) are looked for; each is one quoted phrase, so no character is syntax."""
    text = text.strip()
    if len(text) < FTS_MIN_CHARS:
        return None
    forms = dict.fromkeys((text, json.dumps(text, ensure_ascii=False)[1:-1]))
    return " OR ".join('"' + form.replace('"', '""') + '"' for form in forms)


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


# -- destinations a human said to always deny -------------------------------------------------


@dataclass(frozen=True)
class Denial:
    id: int
    server: str
    tool: str
    destination: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None
    decided_by: str | None


def add_denial(
    conn: sqlite3.Connection,
    server: str,
    tool: str,
    destination: str,
    *,
    expires_at: float | None = None,
    decided_by: str | None = None,
    note: str | None = None,
    now: float | None = None,
) -> int:
    """`destination` must already be normalised (proxy.ask.trust.normalize)."""
    cur = conn.execute(
        "INSERT INTO denied (server, tool, destination, created_at, expires_at, decided_by, note)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (server, tool, destination, time.time() if now is None else now, expires_at,
         decided_by, note),
    )
    return int(cur.lastrowid or 0)


def find_denial(
    conn: sqlite3.Connection, server: str, tool: str, destination: str, now: float | None = None
) -> int | None:
    row = conn.execute(
        "SELECT id FROM denied WHERE server = ? AND tool = ? AND destination = ? "
        "AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) "
        "ORDER BY id DESC LIMIT 1",
        (server, tool, destination, time.time() if now is None else now),
    ).fetchone()
    return int(row[0]) if row else None


def denials(conn: sqlite3.Connection, include_inactive: bool = False,
            now: float | None = None) -> list[Denial]:
    now = time.time() if now is None else now
    sql = ("SELECT id, server, tool, destination, created_at, expires_at, revoked_at, decided_by"
           " FROM denied")
    if not include_inactive:
        sql += " WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
    rows = conn.execute(sql + " ORDER BY created_at DESC",
                        () if include_inactive else (now,)).fetchall()
    return [Denial(*tuple(r)) for r in rows]


def revoke_denial(conn: sqlite3.Connection, denial_id: int, now: float | None = None) -> bool:
    cur = conn.execute("UPDATE denied SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                       (time.time() if now is None else now, denial_id))
    return cur.rowcount > 0
