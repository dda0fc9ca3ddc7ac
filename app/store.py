"""The app's reads and writes of gatewatch.db (pins, trust, pause switches). No Qt.

The database is the source of truth: every change the human makes lands here first, then the
proxies are told to reload.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy import paths
from proxy.ask.trust import Grant, TrustStore
from proxy.engine.pinning import PinStore, ToolVersion
from proxy.engine.pinning import diff as pin_diff
from proxy.store import queries, schema

ALL_SERVERS = "*"  # server_state row meaning "every server, including ones not seen yet"


def open_db() -> sqlite3.Connection:
    return schema.connect(paths.db_path())


# -- pause --------------------------------------------------------------------------------------


def set_paused(conn: sqlite3.Connection, server: str, paused: bool) -> None:
    conn.execute(
        "INSERT INTO server_state (server, paused, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(server) DO UPDATE SET paused = excluded.paused, "
        "updated_at = excluded.updated_at",
        (server, int(paused), time.time()),
    )


def paused_servers(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT server FROM server_state WHERE paused = 1").fetchall()
    return {row[0] for row in rows}


def is_paused(conn: sqlite3.Connection, server: str) -> bool:
    paused = paused_servers(conn)
    return ALL_SERVERS in paused or server in paused


# -- pins ---------------------------------------------------------------------------------------
# Read and written through the engine's PinStore so the app and the proxies agree on versions,
# digests and diffs.


@dataclass(frozen=True)
class PinChange:
    server: str
    tool: str
    status: str  # approved (with a pending change) | pending (never approved) | rejected
    approved: ToolVersion | None
    pending: ToolVersion

    def diff(self) -> str:
        return pin_diff(self.approved, self.pending)


def pin_changes(conn: sqlite3.Connection) -> list[PinChange]:
    """Tools whose current version awaits a human (or was refused), every server."""
    servers = [r[0] for r in conn.execute(
        "SELECT DISTINCT server FROM pins WHERE pending_digest IS NOT NULL OR status != 'approved'"
        " ORDER BY server"
    )]
    changes: list[PinChange] = []
    for server in servers:
        pins = PinStore(conn, _write(conn), server).pins
        for tool, pin in sorted(pins.items()):
            if pin.pending is not None:
                changes.append(PinChange(server, tool, pin.status, pin.approved, pin.pending))
    return changes


def approve_pin(conn: sqlite3.Connection, change: PinChange) -> None:
    """The version awaiting a human becomes the approved one."""
    PinStore(conn, _write(conn), change.server).approve(change.pending)


def reject_pin(conn: sqlite3.Connection, change: PinChange) -> bool:
    """Refuse the change; the pending columns stay so the proxy knows which version to refuse."""
    cur = conn.execute(
        "UPDATE pins SET status = 'rejected', updated_at = ? "
        "WHERE server = ? AND tool = ? AND pending_digest = ?",
        (time.time(), change.server, change.tool, change.pending.digest),
    )
    return cur.rowcount > 0


def _write(conn: sqlite3.Connection) -> Callable[[str, tuple[Any, ...]], None]:
    def write(sql: str, args: tuple[Any, ...]) -> None:
        conn.execute(sql, args)

    return write


# -- trust --------------------------------------------------------------------------------------
# Through the ask chain's TrustStore: destinations are normalised the way the engine looks them up.


def grants(conn: sqlite3.Connection, include_inactive: bool = False) -> list[Grant]:
    found = TrustStore(conn).list(include_inactive=include_inactive)
    return sorted(found, key=lambda g: g.created_at, reverse=True)


def grant_state(grant: Grant, now: float | None = None) -> str:
    now = time.time() if now is None else now
    if grant.revoked_at is not None:
        return "revoked"
    return "active" if grant.active(now) else "expired"


def add_grant(
    conn: sqlite3.Connection,
    server: str,
    tool: str,
    destination: str,
    expires_at: float | None = None,
) -> int:
    server, tool, destination = server.strip(), tool.strip(), destination.strip()
    if not (server and tool and destination):
        raise ValueError("a trusted destination needs a server, a tool and a destination")
    # Trusting a destination by hand lifts a standing deny of the same one.
    from proxy.ask.trust import normalize

    for denial in queries.denials(conn):
        if (denial.server, denial.tool, denial.destination) == (server, tool,
                                                                normalize(destination)):
            queries.revoke_denial(conn, denial.id)
    return TrustStore(conn).add(server, tool, destination, expires_at=expires_at,
                                decided_by="app")


def revoke_grant(conn: sqlite3.Connection, grant_id: int) -> bool:
    return TrustStore(conn).revoke(grant_id)


def trust_fingerprint(conn: sqlite3.Connection) -> tuple[Any, ...]:
    """Changes whenever a grant or a standing deny is added or revoked (cheap to poll)."""
    row = conn.execute(
        "SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || "
        "COALESCE(MAX(revoked_at), 0) FROM trust), (SELECT COUNT(*) || ':' || "
        "COALESCE(MAX(id), 0) || ':' || COALESCE(MAX(revoked_at), 0) FROM denied)"
    ).fetchone()
    return tuple(row)


# -- destinations always denied -----------------------------------------------------------------


def denials(conn: sqlite3.Connection, include_inactive: bool = False) -> list[queries.Denial]:
    return queries.denials(conn, include_inactive=include_inactive)


def denial_state(denial: queries.Denial, now: float | None = None) -> str:
    now = time.time() if now is None else now
    if denial.revoked_at is not None:
        return "revoked"
    return "active" if denial.expires_at is None or denial.expires_at > now else "expired"


def revoke_denial(conn: sqlite3.Connection, denial_id: int) -> bool:
    return queries.revoke_denial(conn, denial_id)


# -- sessions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionRow:
    server: str
    client: str
    pid: int | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    exit_code: int | None


def recent_sessions(conn: sqlite3.Connection, limit: int = 50) -> list[SessionRow]:
    """Sessions that ended, newest first: what ran while nobody was looking."""
    rows = conn.execute(
        "SELECT server, COALESCE(client_name || ' ' || COALESCE(client_version, ''), ''), pid,"
        " started_at, ended_at, end_reason, exit_code FROM sessions WHERE ended_at IS NOT NULL"
        " ORDER BY ended_at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [SessionRow(r[0], r[1].strip(), r[2], r[3], r[4], r[5], r[6]) for r in rows]
