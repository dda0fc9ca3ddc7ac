"""The History tab's reads of the audit log: filters → a parameterised WHERE, keyset pages,
export. No Qt.

Two views of the audit log. "Calls" (the default) lists one row per tool call: its request row,
onto which the database's triggers copy the call's outcome (schema v2). "All frames" lists
every row. Rows are newest first by (ts, id); every index used ends in ts (and the rowid), so
a page costs the same at row 10 and row 1,000,000. Free text of three characters or more goes
through the trigram FTS index, newest match first by id; shorter text has to scan. The index is
filled shortly after a row is written (proxy.store.fts_index): the newest rows, not indexed
yet, are matched by a scan with the index's own rules (substring, case folded).
Rows are read by column name, never by position.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from proxy.errors import InvalidValue
from proxy.store.fts_index import indexed_upto
from proxy.store.queries import EventFilter, fts_forms, fts_query


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


def _named(cur: sqlite3.Cursor) -> Iterator[dict[str, Any]]:
    """A cursor's rows by column name, whatever the connection's row factory."""
    names = [column[0] for column in cur.description]
    for values in cur:
        yield dict(zip(names, values, strict=True))


def _rows(cur: sqlite3.Cursor) -> list[Row]:
    return [Row(**row) for row in _named(cur)]


def _one(cur: sqlite3.Cursor) -> dict[str, Any] | None:
    return next(_named(cur), None)


def _contains(count: int, *args: Any) -> int:
    """gw_contains(n, needle 1..n, column...): does a column hold a needle, case folded as the
    trigram tokenizer folds (the needles come folded)."""
    needles = args[:count]
    return int(any(isinstance(value, str) and any(n in value.lower() for n in needles)
                   for value in args[count:]))


class History:
    """Reads only: the app's connection (or a worker thread's read-only one)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.create_function("gw_contains", -1, _contains, deterministic=True)

    def database_path(self) -> str:
        """The file behind the connection, for a worker thread's own read-only one."""
        main = _one(self._db.execute("PRAGMA database_list"))
        return str(main["file"]) if main else ""

    def page(
        self,
        filt: HistoryFilter,
        after: tuple[float, int] | None = None,
        limit: int = PAGE,
    ) -> list[Row]:
        """The next `limit` rows older than `after` (the (ts, id) of the last row shown)."""
        match = fts_query(filt.text)
        if match is not None:
            return self._text_page(filt, match, None if after is None else after[1], limit)
        where, params = condition(filt)
        if filt.text.strip():
            where += " AND id > ?"
            params.append(self.max_id() - SHORT_TEXT_ROWS)
        if after is not None:
            where += " AND (ts, id) < (?, ?)"
            params = [*params, after[0], after[1]]
        sql = f"SELECT {_select()} FROM events WHERE {where} ORDER BY ts DESC, id DESC LIMIT ?"
        return _rows(self._db.execute(sql, [*params, limit]))

    def _text_page(
        self, filt: HistoryFilter, match: str, before_id: int | None, limit: int
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
        upto = indexed_upto(self._db)  # read first: a row indexed meanwhile is found twice
        found = self._unindexed_page(filt, upto, before_id, limit)
        if len(found) < limit:
            seen = {r.id for r in found}
            more = _rows(self._db.execute(sql, [match, *params, limit]))
            found += [r for r in more if r.id not in seen][: limit - len(found)]
        if before_id is None and not filt.all_frames:
            # A trace id names the blocked result, which is not the call's own row.
            traced = self._by_result_trace(filt, filt.text.strip())
            if traced is not None and all(r.id != traced.id for r in found):
                found = sorted([traced, *found], key=lambda r: r.id, reverse=True)[:limit]
        return found

    def _unindexed_page(
        self, filt: HistoryFilter, upto: int, before_id: int | None, limit: int
    ) -> list[Row]:
        """Matches among the rows the index has not reached yet (the newest ones, a short
        range of rowids), compared as the trigram index compares: a substring, case folded."""
        where, params = condition(filt, text=False)
        needles = [form.lower() for form in fts_forms(filt.text)]
        where += (f" AND id > ? AND gw_contains({len(needles)}, {', '.join('?' * len(needles))},"
                  " server, tool, method, reason, payload, trace_id)")
        params += [upto, *needles]
        if before_id is not None:
            where += " AND id < ?"
            params.append(before_id)
        # NOT INDEXED: walk the rowid range, never a filter's index over the whole table.
        return _rows(self._db.execute(
            f"SELECT {_select()} FROM events NOT INDEXED WHERE {where} ORDER BY id DESC LIMIT ?",
            [*params, limit]))

    def _by_result_trace(self, filt: HistoryFilter, trace: str) -> Row | None:
        where, params = condition(filt, text=False)
        found = _rows(self._db.execute(
            f"SELECT {_select()} FROM events WHERE result_trace = ? AND {where} LIMIT 1",
            [trace, *params],
        ))
        return found[0] if found else None

    def newer(self, filt: HistoryFilter, after_id: int) -> list[Row]:
        """Rows written since `after_id` that match, newest first (live updates). Few rows: the
        rowid range bounds the scan, so the text is matched with LIKE."""
        where, params = condition(filt)
        sql = (
            f"SELECT {_select()} FROM events WHERE id > ? AND {where} "
            "ORDER BY ts DESC, id DESC LIMIT ?"
        )
        return _rows(self._db.execute(sql, [after_id, *params, NEWER_LIMIT]))

    def reread(self, ids: list[int]) -> dict[int, Row]:
        """Rows again by id: a call's outcome arrives after its row is on screen."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        sql = f"SELECT {_select()} FROM events WHERE id IN ({marks})"
        return {r.id: r for r in _rows(self._db.execute(sql, ids))}

    def last_call(self, session_id: str) -> Row | None:
        """A session's latest call, with its outcome (the proxy's heartbeat only knows what the
        rules said before a question was answered)."""
        found = _rows(self._db.execute(
            f"SELECT {_select()} FROM events WHERE session_id = ? AND call_row = 1 "
            "ORDER BY id DESC LIMIT 1", (session_id,)))
        return found[0] if found else None

    def flagged_tool(self, server: str, tool: str) -> bool:
        """Was the tool's latest pinning question about a description that reads like an
        injection?"""
        row = _one(self._db.execute(
            "SELECT detail FROM events WHERE tool = ? AND server = ? AND contract = 'pinning' "
            "AND direction = 'c2s' ORDER BY ts DESC LIMIT 1", (tool, server)))
        if row is None or not row["detail"]:
            return False
        try:
            detail = json.loads(row["detail"])
        except ValueError:
            return False
        return isinstance(detail, dict) and detail.get("pin") == "flagged"

    def call_of(self, event_id: int) -> int | None:
        """The call row an event belongs to (itself for a call row or a row outside any call)."""
        row = _one(self._db.execute(
            "SELECT session_id, rpc_id, method, call_row FROM events WHERE id = ?", (event_id,)
        ))
        if row is None:
            return None
        if row["call_row"] == 1 or row["method"] != "tools/call" or row["rpc_id"] is None:
            return event_id
        found = self._db.execute(
            "SELECT id FROM events WHERE session_id = ? AND rpc_id = ? AND direction = 'c2s' "
            "AND kind = 'request' AND method = 'tools/call' AND id <= ? ORDER BY id DESC LIMIT 1",
            (row["session_id"], row["rpc_id"], event_id),
        ).fetchone()
        return int(found[0]) if found else event_id

    def call_frames(self, call_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """Every frame of one call, oldest first: the request, the asking, the answer, the
        result."""
        head = self.event(call_id)
        if head is None:
            return []
        if head["call_row"] != 1 or head["method"] != "tools/call" or head["rpc_id"] is None:
            return [head]
        rows = _named(self._db.execute(
            f"SELECT {', '.join(DETAIL_COLUMNS)} FROM events WHERE session_id = ? AND rpc_id = ? "
            "AND id >= ? ORDER BY id LIMIT ?",
            (head["session_id"], head["rpc_id"], call_id, limit),
        ))
        frames: list[dict[str, Any]] = []
        for frame in rows:
            if frames and frame["direction"] == "c2s" and frame["kind"] == "request":
                break  # the client reused the id for a later call
            frames.append(frame)
        return frames

    def distinct_values(self, column: str, limit: int = 500) -> list[str]:
        """Distinct servers or tools for the filter menus: one index seek per value (a skip scan),
        not a walk over every row."""
        if column not in ("server", "tool"):
            raise InvalidValue(f"no index to list distinct {column!r}")
        sql = (
            f"WITH RECURSIVE v(x) AS (SELECT MIN({column}) FROM events "
            f"UNION ALL SELECT (SELECT MIN({column}) FROM events WHERE {column} > v.x) FROM v "
            "WHERE v.x IS NOT NULL) SELECT x FROM v WHERE x IS NOT NULL LIMIT ?"
        )
        return [row[0] for row in self._db.execute(sql, (limit,))]

    def max_id(self) -> int:
        row = self._db.execute("SELECT MAX(id) FROM events").fetchone()
        return int(row[0] or 0)

    def event(self, event_id: int) -> dict[str, Any] | None:
        cols = (*DETAIL_COLUMNS, "call_row")
        return _one(self._db.execute(f"SELECT {', '.join(cols)} FROM events WHERE id = ?",
                                     (event_id,)))

    def find_by_trace(self, trace_id: str) -> int | None:
        row = self._db.execute(
            "SELECT id FROM events WHERE trace_id = ? ORDER BY id DESC LIMIT 1", (trace_id,)
        ).fetchone()
        return int(row[0]) if row else None

    def all_rows(self, filt: HistoryFilter) -> Iterator[dict[str, Any]]:
        """Every matching row with its full detail, page by page (for export)."""
        where, params = condition(filt)
        after: tuple[float, int] | None = None
        while True:
            clause = where + (" AND (ts, id) < (?, ?)" if after else "")
            args = [*params, *(after or ())]
            rows = list(_named(self._db.execute(
                f"SELECT {', '.join(DETAIL_COLUMNS)} FROM events WHERE {clause} "
                "ORDER BY ts DESC, id DESC LIMIT 1000",
                args,
            )))
            if not rows:
                return
            yield from rows
            after = (rows[-1]["ts"], rows[-1]["id"])
