"""The `server_state` table: the app's pause switch, per server or for every server (`*`)."""

from __future__ import annotations

import sqlite3
import time

ALL_SERVERS = "*"  # the row meaning "every server, including ones not seen yet"


class ServerState:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def set_paused(self, server: str, paused: bool, now: float | None = None) -> None:
        self._db.execute(
            "INSERT INTO server_state (server, paused, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(server) DO UPDATE SET paused = excluded.paused, "
            "updated_at = excluded.updated_at",
            (server, int(paused), time.time() if now is None else now),
        )

    def paused_servers(self) -> set[str]:
        rows = self._db.execute("SELECT server FROM server_state WHERE paused = 1").fetchall()
        return {row[0] for row in rows}

    def is_paused(self, server: str) -> bool:
        """This server's row, or the `*` row that pauses every server."""
        row = self._db.execute(
            f"SELECT MAX(paused) FROM server_state WHERE server IN (?, '{ALL_SERVERS}')",
            (server,),
        ).fetchone()
        return bool(row and row[0])
