"""The History tab's logic outside Qt: which calls are still open, and export.

The queries (filters, keyset pages, FTS) are proxy.store.history's; its row and filter types
are re-exported here for the tab and the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from proxy.store.history import (
    COLUMNS,
    DETAIL_COLUMNS,
    NEWER_LIMIT,
    PAGE,
    SHORT_TEXT_ROWS,
    History,
    HistoryFilter,
    Row,
    uses_index,
)

__all__ = ["NEWER_LIMIT", "PAGE", "SHORT_TEXT_ROWS", "History", "HistoryFilter", "Row",
           "uses_index"]


def is_open(row: Row) -> bool:
    """A call still waiting for its outcome (its row will change)."""
    return row.direction == "c2s" and row.verdict == "ask" and row.outcome in (None, "ask")


def iso_time(ts: float | None) -> str:
    """A timestamp as people and spreadsheets read it: local time with its UTC offset."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="milliseconds")


def export_record(row: dict[str, Any]) -> dict[str, Any]:
    """An exported row: a readable time first, the plain-words outcome, then the raw fields."""
    from app.outcomes import outcome_text

    what = outcome_text(Row(**{c: row[c] for c in COLUMNS}))
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

