"""The app's reads and writes of gatewatch.db (pins, trust, pause switches). No Qt.

The database is the source of truth: every change the human makes lands here first, then the
proxies are told to reload.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
import time
from dataclasses import dataclass

from proxy import paths
from proxy.store import schema

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


@dataclass(frozen=True)
class PinChange:
    server: str
    tool: str
    status: str
    description: str
    schema: str
    pending_description: str
    pending_schema: str
    updated_at: float

    def diff(self) -> str:
        """Unified diff of description and schema: approved version → the one awaiting a human."""
        return "".join(
            difflib.unified_diff(
                _pin_text(self.description, self.schema),
                _pin_text(self.pending_description, self.pending_schema),
                fromfile=f"{self.tool} (approved)",
                tofile=f"{self.tool} (now)",
            )
        )


def _pin_text(description: str, schema_json: str) -> list[str]:
    try:
        schema_text = json.dumps(json.loads(schema_json), indent=2, sort_keys=True)
    except ValueError:
        schema_text = schema_json
    return [line + "\n" for line in (description + "\n\n" + schema_text).splitlines()]


def pin_changes(conn: sqlite3.Connection) -> list[PinChange]:
    """Tools whose description or schema changed, awaiting a human (pending) or refused."""
    rows = conn.execute(
        "SELECT server, tool, status, description, input_schema, pending_description, "
        "pending_schema, updated_at FROM pins WHERE status IN ('pending', 'rejected') "
        "ORDER BY status, updated_at DESC"
    ).fetchall()
    return [PinChange(r[0], r[1], r[2], r[3] or "", r[4] or "", r[5] or "", r[6] or "", r[7])
            for r in rows]


def approve_pin(conn: sqlite3.Connection, server: str, tool: str) -> bool:
    """The changed tool becomes the approved version."""
    cur = conn.execute(
        "UPDATE pins SET digest = pending_digest, description = pending_description, "
        "input_schema = pending_schema, status = 'approved', pending_digest = NULL, "
        "pending_description = NULL, pending_schema = NULL, updated_at = ? "
        "WHERE server = ? AND tool = ? AND pending_digest IS NOT NULL",
        (time.time(), server, tool),
    )
    return cur.rowcount > 0


def reject_pin(conn: sqlite3.Connection, server: str, tool: str) -> bool:
    """Refuse the change; the pending columns stay so the proxy knows which version to deny."""
    cur = conn.execute(
        "UPDATE pins SET status = 'rejected', updated_at = ? "
        "WHERE server = ? AND tool = ? AND status = 'pending'",
        (time.time(), server, tool),
    )
    return cur.rowcount > 0


# -- trust --------------------------------------------------------------------------------------


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

    def state(self, now: float | None = None) -> str:
        now = time.time() if now is None else now
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


def grants(conn: sqlite3.Connection, include_inactive: bool = False) -> list[Grant]:
    rows = conn.execute(
        "SELECT id, server, tool, destination, created_at, expires_at, revoked_at, decided_by, "
        "note FROM trust ORDER BY created_at DESC"
    ).fetchall()
    out = [Grant(*tuple(r)) for r in rows]
    return out if include_inactive else [g for g in out if g.state() == "active"]


def add_grant(
    conn: sqlite3.Connection,
    server: str,
    tool: str,
    destination: str,
    expires_at: float | None = None,
    note: str | None = None,
) -> int:
    if not (server.strip() and tool.strip() and destination.strip()):
        raise ValueError("a trusted destination needs a server, a tool and a destination")
    cur = conn.execute(
        "INSERT INTO trust (server, tool, destination, created_at, expires_at, decided_by, note) "
        "VALUES (?, ?, ?, ?, ?, 'app', ?)",
        (server.strip(), tool.strip(), destination.strip(), time.time(), expires_at, note),
    )
    return int(cur.lastrowid or 0)


def revoke_grant(conn: sqlite3.Connection, grant_id: int) -> bool:
    cur = conn.execute(
        "UPDATE trust SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        (time.time(), grant_id),
    )
    return cur.rowcount > 0


# -- sessions -----------------------------------------------------------------------------------


def known_servers(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT server FROM sessions ORDER BY server")]


def known_tools(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT tool FROM pins ORDER BY tool")]
