"""The `taint` table: destination-shaped values seen in untrusted tool output, every proxy's."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from proxy.store.database import Write

LOOKUP_LIMIT = 200


@dataclass(frozen=True)
class TaintRow:
    value: str
    server: str
    tool: str | None
    session_id: str | None
    ts: float
    provenance: str
    kind: str | None


class TaintStore:
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        self._db = db
        self._write = write

    def record_all(self, rows: list[tuple[str, str, str, str, str, str, float]]) -> None:
        """(value, kind, provenance, server, tool, session_id, ts) rows in one statement: a
        result can hold thousands of links, and a queued statement each cost more than the
        scan that found them."""
        if rows:
            self._write(
                "INSERT INTO taint (value, kind, provenance, server, tool, session_id, ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                list(rows),
            )

    def sightings(self, values: Sequence[str]) -> list[TaintRow]:
        """Rows for any of `values`: structured sightings first, then oldest first."""
        rows = self._db.execute(
            "SELECT value, server, tool, session_id, ts, provenance, kind FROM taint "
            f"WHERE value IN ({', '.join('?' * len(values))}) "
            f"ORDER BY provenance = 'structured' DESC, ts LIMIT {LOOKUP_LIMIT}",
            tuple(values),
        ).fetchall()
        return [TaintRow(*tuple(row)) for row in rows]
