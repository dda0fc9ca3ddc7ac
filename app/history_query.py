"""SQL for the History tab: filters → a parameterised WHERE, keyset pages, export. No Qt.

Rows are ordered newest first by (ts, id); every index on events ends in ts (and the rowid), so
each filter walks an index in order and a page costs the same at row 10 and row 1,000,000.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from proxy.store.queries import EventFilter

COLUMNS = ("id", "ts", "server", "tool", "verdict", "decided_by", "reason", "method", "trace_id")
DETAIL_COLUMNS = (*COLUMNS, "session_id", "direction", "kind", "contract", "detail",
                  "latency_ms", "payload", "payload_truncated")
PAGE = 256
NEWER_LIMIT = 5000


@dataclass(frozen=True)
class HistoryFilter(EventFilter):
    """The History tab's filter: decisions only unless "All frames" is ticked."""

    decisions_only: bool = True


def page(
    conn: sqlite3.Connection,
    filt: HistoryFilter,
    after: tuple[float, int] | None = None,
    limit: int = PAGE,
) -> list[tuple[Any, ...]]:
    """The next `limit` rows older than `after` (a (ts, id) key), newest first."""
    where, params = filt.where()
    if after is not None:
        where += " AND (ts, id) < (?, ?)"
        params = [*params, after[0], after[1]]
    sql = (
        f"SELECT {', '.join(COLUMNS)} FROM events WHERE {where} "
        "ORDER BY ts DESC, id DESC LIMIT ?"
    )
    return [tuple(r) for r in conn.execute(sql, [*params, limit])]


def newer(conn: sqlite3.Connection, filt: HistoryFilter, after_id: int) -> list[tuple[Any, ...]]:
    """Rows written since `after_id` that match, newest first (live updates)."""
    where, params = filt.where()
    sql = (
        f"SELECT {', '.join(COLUMNS)} FROM events WHERE id > ? AND {where} "
        "ORDER BY ts DESC, id DESC LIMIT ?"
    )
    return [tuple(r) for r in conn.execute(sql, [after_id, *params, NEWER_LIMIT])]


def distinct_values(conn: sqlite3.Connection, column: str, limit: int = 500) -> list[str]:
    """Distinct servers or tools for the filter menus: one index seek per value (a skip scan),
    not a walk over every row."""
    if column not in ("server", "tool"):
        raise ValueError(f"no index to list distinct {column!r}")
    sql = (
        f"WITH RECURSIVE v(x) AS (SELECT MIN({column}) FROM events "
        f"UNION ALL SELECT (SELECT MIN({column}) FROM events WHERE {column} > v.x) FROM v "
        "WHERE v.x IS NOT NULL) SELECT x FROM v WHERE x IS NOT NULL LIMIT ?"
    )
    return [row[0] for row in conn.execute(sql, (limit,))]


def max_id(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT MAX(id) FROM events").fetchone()
    return int(row[0] or 0)


def event(conn: sqlite3.Connection, event_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(DETAIL_COLUMNS)} FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    return dict(zip(DETAIL_COLUMNS, tuple(row), strict=True)) if row else None


def find_by_trace(conn: sqlite3.Connection, trace_id: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM events WHERE trace_id = ? ORDER BY id DESC LIMIT 1", (trace_id,)
    ).fetchone()
    return int(row[0]) if row else None


def all_rows(conn: sqlite3.Connection, filt: HistoryFilter) -> Iterator[dict[str, Any]]:
    """Every matching row with its full detail, page by page (for export)."""
    where, params = filt.where()
    after: tuple[float, int] | None = None
    while True:
        clause = where + (" AND (ts, id) < (?, ?)" if after else "")
        args = [*params, *(after or ())]
        rows = conn.execute(
            f"SELECT {', '.join(DETAIL_COLUMNS)} FROM events WHERE {clause} "
            "ORDER BY ts DESC, id DESC LIMIT 1000",
            args,
        ).fetchall()
        if not rows:
            return
        for r in rows:
            yield dict(zip(DETAIL_COLUMNS, tuple(r), strict=True))
        after = (rows[-1][1], rows[-1][0])


def export_csv(rows: Iterator[dict[str, Any]], out: Any) -> int:
    import csv

    writer = csv.DictWriter(out, fieldnames=list(DETAIL_COLUMNS))
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    return count


def export_json(rows: Iterator[dict[str, Any]], out: Any) -> int:
    """A JSON array, streamed so a large export never sits whole in memory."""
    count = 0
    out.write("[")
    for row in rows:
        out.write(("," if count else "") + "\n" + json.dumps(row, ensure_ascii=False))
        count += 1
    out.write("\n]\n")
    return count
