"""The app's reads and writes of gatewatch.db (pins, trust, pause switches). No Qt.

The database is the source of truth: every change the human makes lands here first, then the
proxies are told to reload.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from proxy import paths
from proxy.engine.pinning import PinStore, ToolVersion
from proxy.engine.pinning import diff as pin_diff
from proxy.errors import InvalidValue
from proxy.store import schema
from proxy.store.database import Database
from proxy.store.server_state import ALL_SERVERS
from proxy.store.sessions import SessionRow
from proxy.store.trust import Denial, Grant


def open_db() -> sqlite3.Connection:
    return schema.connect(paths.db_path())


# -- pause --------------------------------------------------------------------------------------


def set_paused(conn: sqlite3.Connection, server: str, paused: bool) -> None:
    Database(conn).server_state.set_paused(server, paused)


def paused_servers(conn: sqlite3.Connection) -> set[str]:
    return Database(conn).server_state.paused_servers()


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
    db = Database(conn)
    changes: list[PinChange] = []
    for server in db.pins.servers_with_changes():
        pins = PinStore(db.pins, server).pins
        for tool, pin in sorted(pins.items()):
            if pin.pending is not None:
                changes.append(PinChange(server, tool, pin.status, pin.approved, pin.pending))
    return changes


def approve_pin(conn: sqlite3.Connection, change: PinChange) -> None:
    """The version awaiting a human becomes the approved one."""
    PinStore(Database(conn).pins, change.server).approve(change.pending)


def reject_pin(conn: sqlite3.Connection, change: PinChange) -> bool:
    """Refuse the change; the pending columns stay so the proxy knows which version to refuse."""
    return Database(conn).pins.reject(change.server, change.tool, change.pending.digest)


# -- trust --------------------------------------------------------------------------------------
# Through the store's TrustStore: destinations are normalised the way the engine looks them up.


def grants(conn: sqlite3.Connection, include_inactive: bool = False) -> list[Grant]:
    found = Database(conn).trust.list(include_inactive=include_inactive)
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
        raise InvalidValue("a trusted destination needs a server, a tool and a destination")
    # Trusting a destination by hand lifts a standing deny of the same one.
    from proxy.ask.trust import deny_key

    db = Database(conn)
    for denial in db.denials.list():
        if (denial.server, denial.tool, denial.destination) == (server, tool,
                                                                deny_key(destination)):
            db.denials.revoke(denial.id)
    return db.trust.add(server, tool, destination, expires_at=expires_at, decided_by="app")


def revoke_grant(conn: sqlite3.Connection, grant_id: int) -> bool:
    return Database(conn).trust.revoke(grant_id)


def trust_fingerprint(conn: sqlite3.Connection) -> tuple[Any, ...]:
    """Changes whenever a grant or a standing deny is added or revoked (cheap to poll)."""
    return Database(conn).trust.fingerprint()


# -- destinations always denied -----------------------------------------------------------------


def denials(conn: sqlite3.Connection, include_inactive: bool = False) -> list[Denial]:
    return Database(conn).denials.list(include_inactive=include_inactive)


def denial_state(denial: Denial, now: float | None = None) -> str:
    now = time.time() if now is None else now
    if denial.revoked_at is not None:
        return "revoked"
    return "active" if denial.active(now) else "expired"


def revoke_denial(conn: sqlite3.Connection, denial_id: int) -> bool:
    return Database(conn).denials.revoke(denial_id)


# -- sessions -----------------------------------------------------------------------------------


def recent_sessions(conn: sqlite3.Connection, limit: int = 50) -> list[SessionRow]:
    """Sessions that ended, newest first: what ran while nobody was looking."""
    return Database(conn).sessions.recent(limit)
