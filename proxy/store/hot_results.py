"""The `hot_results` table: result texts the detector flagged, shared by every proxy."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from proxy.store.database import Write


@dataclass(frozen=True)
class HotRow:
    id: int
    server: str
    tool: str | None
    session_id: str | None
    ts: float
    verdict: str
    text: str


class HotResults:
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        self._db = db
        self._write = write

    def record(self, server: str, tool: str | None, session_id: str | None, ts: float,
               verdict: str, text: str) -> None:
        self._write(
            "INSERT INTO hot_results (server, tool, session_id, ts, verdict, text) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (server, tool, session_id, ts, verdict, text),
        )

    def others_since(self, last_id: int, server: str, session_id: str | None) -> list[HotRow]:
        """Rows after `last_id` that this session (of this server) did not write, oldest
        first."""
        rows = self._db.execute(
            "SELECT id, server, tool, session_id, ts, verdict, text FROM hot_results "
            "WHERE id > ? AND NOT (session_id IS ? AND server = ?) ORDER BY id",
            (last_id, session_id, server),
        ).fetchall()
        return [HotRow(*tuple(row)) for row in rows]
