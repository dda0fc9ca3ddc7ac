"""Remembered human answers: grants (`trust`) and standing denies (`denied`).

Both are scoped to server + tool + destination, never a destination alone, and both are valid
while `VALID` holds: not revoked, and not expired. Destinations are stored normalised so the
engine's lookups match (the engine passes keys it has already normalised).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

# The one "still valid" condition, for grants and denials alike; `_active` is the same in Python.
VALID = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
ANY_TOOL = "*"  # a grant for every tool of a server (written by hand with the CLI)


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _active(revoked_at: float | None, expires_at: float | None, now: float) -> bool:
    return revoked_at is None and (expires_at is None or expires_at > now)


def _grant_key(destination: str) -> str:
    from proxy.engine.destinations import grant_key

    return grant_key(destination)


def _lookup_keys(destination: str) -> tuple[str, ...]:
    from proxy.engine.destinations import grant_lookup_keys

    return grant_lookup_keys(destination)


def _marks(keys: tuple[str, ...] | list[str]) -> str:
    return ", ".join("?" * len(keys))


@dataclass(frozen=True)
class Remembered:
    """One remembered answer, a grant or a standing deny: its scope and its validity."""

    id: int
    server: str
    tool: str
    destination: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None
    decided_by: str | None

    def active(self, now: float) -> bool:
        return _active(self.revoked_at, self.expires_at, now)


@dataclass(frozen=True)
class Grant(Remembered):
    note: str | None


_COLUMNS = "id, server, tool, destination, created_at, expires_at, revoked_at, decided_by, note"


class _Answers:
    """What grants and standing denies share: the insert and the revoke."""

    TABLE = ""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def _insert(self, server: str, tool: str, destination: str, expires_at: float | None,
                decided_by: str | None, note: str | None, now: float | None) -> int:
        cur = self._db.execute(
            f"INSERT INTO {self.TABLE} (server, tool, destination, created_at, expires_at,"
            " decided_by, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (server, tool, destination, _now(now), expires_at, decided_by, note),
        )
        return int(cur.lastrowid or 0)

    def revoke(self, answer_id: int, now: float | None = None) -> bool:
        """False when there is no such row or it was already revoked."""
        cur = self._db.execute(
            f"UPDATE {self.TABLE} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (_now(now), answer_id),
        )
        return cur.rowcount == 1


class TrustStore(_Answers):
    TABLE = "trust"

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
        return self._insert(server, tool, _grant_key(destination), expires_at, decided_by,
                            note, now)

    def find(
        self, server: str, tool: str, destination: str, now: float | None = None
    ) -> Grant | None:
        """The newest valid grant for exactly this server and tool that vouches for the
        destination (proxy.engine.destinations.trust_keys)."""
        keys = _lookup_keys(destination)
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM trust WHERE server = ? AND tool = ? AND destination IN"
            f" ({_marks(keys)}) AND {VALID} ORDER BY id DESC LIMIT 1",
            (server, tool, *keys, _now(now)),
        ).fetchone()
        return Grant(*row) if row else None

    def allows(self, server: str, tool: str, keys: tuple[str, ...],
               now: float | None = None) -> bool:
        """Is there a valid grant for this tool (or every tool of the server) under one of
        these keys (a destination's trust_keys)? The engine's question."""
        row = self._db.execute(
            f"SELECT 1 FROM trust WHERE server = ? AND tool IN (?, '{ANY_TOOL}') "
            f"AND destination IN ({_marks(keys)}) AND {VALID} LIMIT 1",
            (server, tool, *keys, _now(now)),
        ).fetchone()
        return row is not None

    def live_for_tool(self, server: str, tool: str, now: float | None = None) -> list[Grant]:
        """The valid grants a call of this tool can use (its own and the server-wide ones)."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM trust WHERE server = ? AND tool IN (?, '{ANY_TOOL}') "
            f"AND {VALID} ORDER BY id",
            (server, tool, _now(now)),
        ).fetchall()
        return [Grant(*row) for row in rows]

    def copy_in(self, grants: Iterable[Grant]) -> None:
        """Grants from another database (a hypothetical check's scratch copy of the real one):
        scope, destination and validity only."""
        self._db.executemany(
            "INSERT INTO trust (server, tool, destination, created_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(g.server, g.tool, g.destination, g.created_at, g.expires_at) for g in grants],
        )

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
            where.append(VALID)
            args.append(_now(now))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM trust{clause} ORDER BY server, tool, destination, id", args
        ).fetchall()
        return [Grant(*row) for row in rows]

    def fingerprint(self) -> tuple[object, ...]:
        """Changes whenever a grant or a standing deny is added or revoked (cheap to poll)."""
        row = self._db.execute(
            "SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || "
            "COALESCE(MAX(revoked_at), 0) FROM trust), (SELECT COUNT(*) || ':' || "
            "COALESCE(MAX(id), 0) || ':' || COALESCE(MAX(revoked_at), 0) FROM denied)"
        ).fetchone()
        return tuple(row)


# -- destinations a human said to always deny -------------------------------------------------


class Denial(Remembered):
    """A destination a human said to always deny (for this server and tool)."""


class Denials(_Answers):
    TABLE = "denied"

    def add(
        self,
        server: str,
        tool: str,
        destination: str,
        *,
        expires_at: float | None = None,
        decided_by: str | None = None,
        note: str | None = None,
        now: float | None = None,
    ) -> int:
        """`destination` must already be normalised (proxy.ask.trust.deny_key)."""
        return self._insert(server, tool, destination, expires_at, decided_by, note, now)

    def find(self, server: str, tool: str, destination: str,
             now: float | None = None) -> int | None:
        row = self._db.execute(
            f"SELECT id FROM denied WHERE server = ? AND tool = ? AND destination = ? "
            f"AND {VALID} ORDER BY id DESC LIMIT 1",
            (server, tool, destination, _now(now)),
        ).fetchone()
        return int(row[0]) if row else None

    def list(self, include_inactive: bool = False, now: float | None = None) -> list[Denial]:
        sql = ("SELECT id, server, tool, destination, created_at, expires_at, revoked_at,"
               " decided_by FROM denied")
        if not include_inactive:
            sql += f" WHERE {VALID}"
        rows = self._db.execute(sql + " ORDER BY created_at DESC",
                                () if include_inactive else (_now(now),)).fetchall()
        return [Denial(*tuple(r)) for r in rows]
