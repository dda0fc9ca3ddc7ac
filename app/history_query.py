"""SQL for the History tab: filters → a parameterised WHERE, keyset pages, export. No Qt.

Two views of the audit log. "Calls" (the default) lists one row per tool call: its request row,
onto which the database's triggers copy the call's outcome (schema v2). "All frames" lists
every row. Rows are newest first by (ts, id); every index used ends in ts (and the rowid), so
a page costs the same at row 10 and row 1,000,000. Free text of three characters or more goes
through the trigram FTS index, newest match first by id; shorter text has to scan.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from proxy.store.queries import EventFilter, fts_query


class Row(NamedTuple):
    """One History row (a call, or one frame in the "All frames" view)."""

    id: int
    ts: float
    server: str
    tool: str | None
    method: str | None
    direction: str
    kind: str
    verdict: str | None
    decided_by: str | None
    contract: str | None
    reason: str | None
    trace_id: str | None
    outcome: str | None
    outcome_by: str | None
    outcome_reason: str | None
    outcome_detail: str | None
    result_verdict: str | None
    result_reason: str | None
    result_trace: str | None


COLUMNS = Row._fields
DETAIL_COLUMNS = (*COLUMNS, "session_id", "rpc_id", "detail", "latency_ms", "payload",
                  "payload_truncated")
PAGE = 256
NEWER_LIMIT = 5000
# Text too short for the trigram index is looked for in the newest rows only, so a keystroke
# never scans a million rows; the tab says so.
SHORT_TEXT_ROWS = 20_000


@dataclass(frozen=True)
class HistoryFilter(EventFilter):
    """The History tab's filter. `verdict` is what finally happened to a call (allow, deny,
    ask, warn, block) unless `all_frames`, where it is each frame's own verdict."""

    all_frames: bool = False


def _select(prefix: str = "") -> str:
    return ", ".join(prefix + c for c in COLUMNS)


def condition(filt: HistoryFilter, prefix: str = "", *, text: bool = True) -> tuple[str, list[Any]]:
    if filt.all_frames:
        return filt.where(prefix, text=text)
    base = EventFilter(server=filt.server, tool=filt.tool, since=filt.since, until=filt.until,
                       text=filt.text if text else "")
    where, params = base.where(prefix)
    where += f" AND {prefix}call_row = 1"
    if filt.verdict:
        where += f" AND {prefix}final = ?"
        params.append(filt.verdict.lower())
    return where, params


def uses_index(filt: HistoryFilter) -> bool:
    """False when the free text is too short for the FTS index and the query must scan."""
    return not filt.text.strip() or fts_query(filt.text) is not None


def page(
    conn: sqlite3.Connection,
    filt: HistoryFilter,
    after: tuple[float, int] | None = None,
    limit: int = PAGE,
) -> list[Row]:
    """The next `limit` rows older than `after` (the (ts, id) of the last row shown)."""
    match = fts_query(filt.text)
    if match is not None:
        return _text_page(conn, filt, match, None if after is None else after[1], limit)
    where, params = condition(filt)
    if filt.text.strip():
        where += " AND id > ?"
        params.append(max_id(conn) - SHORT_TEXT_ROWS)
    if after is not None:
        where += " AND (ts, id) < (?, ?)"
        params = [*params, after[0], after[1]]
    sql = f"SELECT {_select()} FROM events WHERE {where} ORDER BY ts DESC, id DESC LIMIT ?"
    return [Row._make(r) for r in conn.execute(sql, [*params, limit])]


def _text_page(
    conn: sqlite3.Connection, filt: HistoryFilter, match: str, before_id: int | None, limit: int
) -> list[Row]:
    # The FTS table drives the join (CROSS JOIN keeps that order) and hands out rowids newest
    # first, so a page stops after `limit` matches instead of sorting every match.
    where, params = condition(filt, "e.", text=False)
    if before_id is not None:
        where += " AND events_fts.rowid < ?"  # on the FTS side: it seeks, not skips
        params.append(before_id)
    sql = (
        f"SELECT {_select('e.')} FROM events_fts CROSS JOIN events e ON e.id = events_fts.rowid"
        f" WHERE events_fts MATCH ? AND {where} ORDER BY events_fts.rowid DESC LIMIT ?"
    )
    found = [Row._make(r) for r in conn.execute(sql, [match, *params, limit])]
    if before_id is None and not filt.all_frames:
        # A trace id names the blocked result, which is not the call's own row.
        traced = _by_result_trace(conn, filt, filt.text.strip())
        if traced is not None and all(r.id != traced.id for r in found):
            found = sorted([traced, *found], key=lambda r: r.id, reverse=True)[:limit]
    return found


def _by_result_trace(conn: sqlite3.Connection, filt: HistoryFilter, trace: str) -> Row | None:
    where, params = condition(filt, text=False)
    row = conn.execute(
        f"SELECT {_select()} FROM events WHERE result_trace = ? AND {where} LIMIT 1",
        [trace, *params],
    ).fetchone()
    return Row._make(row) if row else None


def newer(conn: sqlite3.Connection, filt: HistoryFilter, after_id: int) -> list[Row]:
    """Rows written since `after_id` that match, newest first (live updates). Few rows: the
    rowid range bounds the scan, so the text is matched with LIKE."""
    where, params = condition(filt)
    sql = (
        f"SELECT {_select()} FROM events WHERE id > ? AND {where} "
        "ORDER BY ts DESC, id DESC LIMIT ?"
    )
    return [Row._make(r) for r in conn.execute(sql, [after_id, *params, NEWER_LIMIT])]


def reread(conn: sqlite3.Connection, ids: list[int]) -> dict[int, Row]:
    """Rows again by id: a call's outcome arrives after its row is on screen."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    sql = f"SELECT {_select()} FROM events WHERE id IN ({marks})"
    return {r[0]: Row._make(r) for r in conn.execute(sql, ids)}


def is_open(row: Row) -> bool:
    """A call still waiting for its outcome (its row will change)."""
    return row.direction == "c2s" and row.verdict == "ask" and row.outcome in (None, "ask")


def last_call(conn: sqlite3.Connection, session_id: str) -> Row | None:
    """A session's latest call, with its outcome (the proxy's heartbeat only knows what the
    rules said before a question was answered)."""
    row = conn.execute(
        f"SELECT {_select()} FROM events WHERE session_id = ? AND call_row = 1 "
        "ORDER BY id DESC LIMIT 1", (session_id,)).fetchone()
    return Row._make(row) if row else None


def flagged_tool(conn: sqlite3.Connection, server: str, tool: str) -> bool:
    """Was the tool's latest pinning question about a description that reads like an
    injection?"""
    row = conn.execute(
        "SELECT detail FROM events WHERE tool = ? AND server = ? AND contract = 'pinning' "
        "AND direction = 'c2s' ORDER BY ts DESC LIMIT 1", (tool, server)).fetchone()
    if row is None or not row[0]:
        return False
    try:
        detail = json.loads(row[0])
    except ValueError:
        return False
    return isinstance(detail, dict) and detail.get("pin") == "flagged"


def call_of(conn: sqlite3.Connection, event_id: int) -> int | None:
    """The call row an event belongs to (itself for a call row or a row outside any call)."""
    row = conn.execute(
        "SELECT session_id, rpc_id, method, call_row FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    if row is None:
        return None
    if row[3] == 1 or row[2] != "tools/call" or row[1] is None:
        return event_id
    found = conn.execute(
        "SELECT id FROM events WHERE session_id = ? AND rpc_id = ? AND direction = 'c2s' "
        "AND kind = 'request' AND method = 'tools/call' AND id <= ? ORDER BY id DESC LIMIT 1",
        (row[0], row[1], event_id),
    ).fetchone()
    return int(found[0]) if found else event_id


def call_frames(conn: sqlite3.Connection, call_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """Every frame of one call, oldest first: the request, the asking, the answer, the result."""
    head = event(conn, call_id)
    if head is None:
        return []
    if head["call_row"] != 1 or head["method"] != "tools/call" or head["rpc_id"] is None:
        return [head]
    rows = conn.execute(
        f"SELECT {', '.join(DETAIL_COLUMNS)} FROM events WHERE session_id = ? AND rpc_id = ? "
        "AND id >= ? ORDER BY id LIMIT ?",
        (head["session_id"], head["rpc_id"], call_id, limit),
    ).fetchall()
    frames: list[dict[str, Any]] = []
    for r in rows:
        frame = dict(zip(DETAIL_COLUMNS, tuple(r), strict=True))
        if frames and frame["direction"] == "c2s" and frame["kind"] == "request":
            break  # the client reused the id for a later call
        frames.append(frame)
    return frames


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
    cols = (*DETAIL_COLUMNS, "call_row")
    row = conn.execute(
        f"SELECT {', '.join(cols)} FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    return dict(zip(cols, tuple(row), strict=True)) if row else None


def find_by_trace(conn: sqlite3.Connection, trace_id: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM events WHERE trace_id = ? ORDER BY id DESC LIMIT 1", (trace_id,)
    ).fetchone()
    return int(row[0]) if row else None


def all_rows(conn: sqlite3.Connection, filt: HistoryFilter) -> Iterator[dict[str, Any]]:
    """Every matching row with its full detail, page by page (for export)."""
    where, params = condition(filt)
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


def iso_time(ts: float | None) -> str:
    """A timestamp as people and spreadsheets read it: local time with its UTC offset."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="milliseconds")


def export_record(row: dict[str, Any]) -> dict[str, Any]:
    """An exported row: a readable time first, the plain-words outcome, then the raw fields."""
    from app.outcomes import outcome_text

    what = outcome_text(Row._make(row[c] for c in COLUMNS))
    return {"time": iso_time(row.get("ts")), "what_happened": what, **row}


EXPORT_FIELDS = ("time", "what_happened", *DETAIL_COLUMNS)


def export_csv(rows: Iterator[dict[str, Any]], out: Any) -> int:
    import csv

    writer = csv.DictWriter(out, fieldnames=list(EXPORT_FIELDS))
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow(export_record(row))
        count += 1
    return count


def export_json(rows: Iterator[dict[str, Any]], out: Any) -> int:
    """A JSON array, streamed so a large export never sits whole in memory."""
    count = 0
    out.write("[")
    for row in rows:
        out.write(("," if count else "") + "\n" + json.dumps(export_record(row),
                                                             ensure_ascii=False))
        count += 1
    out.write("\n]\n")
    return count

