"""Remembered approvals in the shared database's `trust` table.

A grant is scoped to server + tool + destination, never a destination alone. It is valid while
`revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now)`; the engine reads the same
rows. Destinations are stored normalised so the engine's lookups match.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass


def normalize(destination: str) -> str:
    from proxy.engine.destinations import normalize_destination

    return normalize_destination(destination)


@dataclass(frozen=True)
class Grant:
    id: int
    server: str
    tool: str
    destination: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None
    decided_by: str | None
    note: str | None

    def active(self, now: float) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


_COLUMNS = "id, server, tool, destination, created_at, expires_at, revoked_at, decided_by, note"
_VALID = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"


class TrustStore:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    @property
    def db(self) -> sqlite3.Connection:
        return self._db

    def add(
        self,
        server: str,
        tool: str,
        destination: str,
        *,
        expires_at: float | None = None,
        decided_by: str = "cli",
        note: str | None = None,
        now: float | None = None,
    ) -> int:
        cur = self._db.execute(
            "INSERT INTO trust (server, tool, destination, created_at, expires_at, decided_by,"
            " note) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                server,
                tool,
                normalize(destination),
                time.time() if now is None else now,
                expires_at,
                decided_by,
                note,
            ),
        )
        return int(cur.lastrowid or 0)

    def find(
        self, server: str, tool: str, destination: str, now: float | None = None
    ) -> Grant | None:
        """The newest valid grant for exactly this server, tool and destination."""
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM trust WHERE server = ? AND tool = ? AND destination = ?"
            f" AND {_VALID} ORDER BY id DESC LIMIT 1",
            (server, tool, normalize(destination), time.time() if now is None else now),
        ).fetchone()
        return Grant(*row) if row else None

    def list(
        self,
        *,
        server: str | None = None,
        include_inactive: bool = False,
        now: float | None = None,
    ) -> list[Grant]:
        where: list[str] = []
        args: list[object] = []
        if server is not None:
            where.append("server = ?")
            args.append(server)
        if not include_inactive:
            where.append(_VALID)
            args.append(time.time() if now is None else now)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM trust{clause} ORDER BY server, tool, destination, id", args
        ).fetchall()
        return [Grant(*row) for row in rows]

    def revoke(self, grant_id: int, now: float | None = None) -> bool:
        """Revoke a grant; False when there is no such grant or it was already revoked."""
        cur = self._db.execute(
            "UPDATE trust SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (time.time() if now is None else now, grant_id),
        )
        return cur.rowcount == 1


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """'90s', '30m', '24h', '7d', '2w' -> seconds."""
    match = _DURATION.match(text.lower())
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration: write a number and a unit, e.g. 24h or 7d")
    return float(match.group(1)) * _UNIT_S[match.group(2)]
