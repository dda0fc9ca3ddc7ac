"""The `events` table (the audit log): its columns, its insert, and the CLI's reads of it.

The proxy writes events in batches through proxy.audit's writer (`INSERT_EVENT`, one row per
event in `EVENT_FIELDS` order); the ask chain's steps go through `write` like other statements,
so their order with the events is kept.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from proxy.errors import InvalidValue
from proxy.store.database import Write
from proxy.store.queries import EventFilter

# Every column, as the CLI reads them.
EVENT_COLUMNS = (
    "id, ts, session_id, server, direction, kind, method, rpc_id, tool, size, verdict, "
    "contract, reason, decided_by, detail, latency_ms, trace_id, payload, payload_truncated"
)
# What a written event carries, in its row's order (the id is the database's).
EVENT_FIELDS = (
    "ts", "session_id", "server", "direction", "kind", "method", "rpc_id", "tool", "size",
    "verdict", "contract", "reason", "decided_by", "detail", "latency_ms", "trace_id", "payload",
    "payload_truncated",
)
INSERT_EVENT = (
    f"INSERT INTO events ({', '.join(EVENT_FIELDS)}) "
    f"VALUES ({', '.join('?' * len(EVENT_FIELDS))})"
)
# The writer inserts a batch's rows up to this many per statement. The call-outcome triggers
# (schema v2) make SQLite keep a statement journal of every page an INSERT changes (the table
# and each of its indexes), so one statement per row copied about 15 pages per row; one
# statement for many rows copies each page once. 32 rows of 18 values stay under the
# 999-parameter limit of older SQLite builds. The triggers still run row by row, in order.
ROWS_PER_INSERT = 32


@functools.cache
def insert_events(count: int) -> str:
    """An INSERT of `count` rows (placeholders only)."""
    row = f"({', '.join('?' * len(EVENT_FIELDS))})"
    return f"INSERT INTO events ({', '.join(EVENT_FIELDS)}) VALUES {', '.join([row] * count)}"


def insert_rows(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert event rows in order: full statements of ROWS_PER_INSERT, the rest in powers of
    two (so only a few statement shapes are ever prepared)."""
    start = 0
    while start < len(rows):
        count = min(ROWS_PER_INSERT, 1 << ((len(rows) - start).bit_length() - 1))
        part = rows[start:start + count]
        db.execute(insert_events(count), [value for row in part for value in row])
        start += count


GROUPABLE = ("server", "method", "verdict", "tool", "kind", "direction")


class EventLog:
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        self._db = db
        self._write = write

    # -- writing ---------------------------------------------------------------------------

    def ask_step(self, *, ts: float, session_id: str, server: str, rpc_id: str | None,
                 tool: str, contract: str | None, reason: str, step: str,
                 detail: str | None) -> None:
        """A step of the ask chain that was tried and fell through (kind `ask_step`)."""
        row: dict[str, Any] = dict.fromkeys(EVENT_FIELDS)
        row.update(ts=ts, session_id=session_id, server=server, direction="gw",
                   kind="ask_step", method="tools/call", rpc_id=rpc_id, tool=tool, size=0,
                   verdict="ask", contract=contract, reason=reason, decided_by=step,
                   detail=detail, payload_truncated=0)
        self._write(INSERT_EVENT, tuple(row[f] for f in EVENT_FIELDS))

    # -- reading ---------------------------------------------------------------------------

    def tail(self, flt: EventFilter, limit: int) -> list[sqlite3.Row]:
        """The last `limit` matching events, oldest first."""
        where, params = flt.where()
        rows = self._db.execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE {where} ORDER BY id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        rows.reverse()
        return rows

    def after(self, flt: EventFilter, last_id: int) -> list[sqlite3.Row]:
        where, params = flt.where()
        return self._db.execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE {where} AND id > ? ORDER BY id "
            "LIMIT 10000",
            [*params, last_id],
        ).fetchall()

    def max_id(self) -> int:
        return int(self._db.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])

    def count(self, flt: EventFilter) -> int:
        where, params = flt.where()
        return int(self._db.execute(f"SELECT COUNT(*) FROM events WHERE {where}",
                                    params).fetchone()[0])

    def counts(self, column: str, flt: EventFilter, limit: int = 20) -> list[Any]:
        if column not in GROUPABLE:
            raise InvalidValue(f"cannot group by {column!r}")
        where, params = flt.where()
        return self._db.execute(
            f"SELECT {column} AS key, COUNT(*) AS n FROM events WHERE {where} "
            f"AND {column} IS NOT NULL GROUP BY {column} ORDER BY n DESC LIMIT ?",
            [*params, limit],
        ).fetchall()

    def latency_percentiles(
        self, flt: EventFilter, quantiles: tuple[float, ...] = (0.5, 0.95)
    ) -> dict[str, float | None]:
        where, params = flt.where()
        base = f"FROM events WHERE {where} AND latency_ms IS NOT NULL"
        total = self._db.execute(f"SELECT COUNT(*) {base}", params).fetchone()[0]
        out: dict[str, float | None] = {}
        for q in quantiles:
            key = f"p{round(q * 100)}"
            if not total:
                out[key] = None
                continue
            offset = min(total - 1, int(q * total))
            row = self._db.execute(
                f"SELECT latency_ms {base} ORDER BY latency_ms LIMIT 1 OFFSET ?",
                [*params, offset],
            ).fetchone()
            out[key] = row[0]
        return out

    # -- decisions (verdict set), for the MCP server's audit summary -------------------------

    _DECISIONS = "verdict IS NOT NULL AND ts >= ? AND (? IS NULL OR server = ?)"

    def decision_counts(self, column: str, since: float,
                        server: str | None) -> dict[str, int]:
        """Decisions since `since` counted by verdict or server, most first."""
        if column not in ("verdict", "server"):
            raise InvalidValue(f"cannot group by {column!r}")
        rows = self._db.execute(
            f"SELECT {column}, COUNT(*) FROM events WHERE {self._DECISIONS} "
            f"GROUP BY {column} ORDER BY 2 DESC",
            (since, server, server),
        )
        return {str(row[0]): int(row[1]) for row in rows}

    def top_denied_tools(self, since: float, server: str | None,
                         limit: int = 10) -> list[tuple[str, str, int]]:
        rows = self._db.execute(
            f"SELECT server, tool, COUNT(*) FROM events WHERE {self._DECISIONS} "
            "AND verdict IN ('deny', 'block') GROUP BY server, tool "
            "ORDER BY 3 DESC, 1, 2 LIMIT ?",
            (since, server, server, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def recent_decisions(self, since: float, server: str | None,
                         limit: int) -> list[sqlite3.Row]:
        """Newest first: ts, server, tool, method, verdict, contract, reason, decided_by,
        latency_ms, trace_id."""
        return self._db.execute(
            "SELECT ts, server, tool, method, verdict, contract, reason, decided_by, "
            f"latency_ms, trace_id FROM events WHERE {self._DECISIONS} "
            "ORDER BY ts DESC, id DESC LIMIT ?",
            (since, server, server, limit),
        ).fetchall()

    def nearest_decision(self, session_id: str | None, ts: float) -> int | None:
        """The id of the session's decision closest in time to `ts`."""
        row = self._db.execute(
            "SELECT id FROM events WHERE session_id = ? AND verdict IS NOT NULL "
            "ORDER BY abs(ts - ?) LIMIT 1",
            (session_id, ts),
        ).fetchone()
        return int(row[0]) if row else None

