"""The `pins` table: each server's approved tool versions and the changes awaiting a human.

The rules (what counts as the same tool, when a change is asked) are the engine's
(proxy.engine.pinning); this is only how the rows are read and written.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Protocol

from proxy.store.database import Write


class Version(Protocol):
    """A tool version as pinned (proxy.engine.pinning.ToolVersion)."""

    @property
    def name(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> str: ...
    @property
    def annotations(self) -> str: ...


@dataclass(frozen=True)
class PinRow:
    tool: str
    status: str
    digest: str | None
    description: str | None
    input_schema: str | None
    annotations: str | None
    pending_digest: str | None
    pending_description: str | None
    pending_schema: str | None
    pending_annotations: str | None


class Pins:
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        self._db = db
        self._write = write

    def of_server(self, server: str) -> list[PinRow]:
        rows = self._db.execute(
            "SELECT tool, status, digest, description, input_schema, annotations, "
            "pending_digest, pending_description, pending_schema, pending_annotations "
            "FROM pins WHERE server = ?",
            (server,),
        ).fetchall()
        return [PinRow(*tuple(row)) for row in rows]

    def approved_elsewhere(self, server: str) -> list[tuple[str, str]]:
        """(server, tool) of every tool approved on another server."""
        rows = self._db.execute(
            "SELECT DISTINCT server, tool FROM pins WHERE status = 'approved' AND server != ?",
            (server,),
        ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def servers_with_changes(self) -> list[str]:
        """Servers with a tool awaiting a human (or refused)."""
        return [row[0] for row in self._db.execute(
            "SELECT DISTINCT server FROM pins WHERE pending_digest IS NOT NULL "
            "OR status != 'approved' ORDER BY server"
        )]

    def approve(self, server: str, version: Version, now: float | None = None) -> None:
        """`version` becomes the approved one; any pending change is dropped."""
        now = time.time() if now is None else now
        self._write(
            "INSERT INTO pins (server, tool, digest, description, input_schema, annotations, "
            "status, pending_digest, pending_description, pending_schema, pending_annotations, "
            "first_seen, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'approved', NULL, NULL, NULL, "
            "NULL, ?, ?) ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, "
            "description = excluded.description, input_schema = excluded.input_schema, "
            "annotations = excluded.annotations, status = 'approved', pending_digest = NULL, "
            "pending_description = NULL, pending_schema = NULL, pending_annotations = NULL, "
            "updated_at = excluded.updated_at",
            (server, version.name, version.digest, version.description, version.input_schema,
             version.annotations, now, now),
        )

    def propose_new(self, server: str, version: Version, now: float | None = None) -> None:
        """A tool never approved: pending, with its text for the question."""
        now = time.time() if now is None else now
        self._write(
            "INSERT INTO pins (server, tool, digest, description, input_schema, annotations,"
            " status, pending_digest, pending_description, pending_schema, "
            "pending_annotations, first_seen, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, "
            "description = excluded.description, input_schema = excluded.input_schema, "
            "annotations = excluded.annotations, pending_digest = excluded.pending_digest, "
            "pending_description = excluded.pending_description, "
            "pending_schema = excluded.pending_schema, "
            "pending_annotations = excluded.pending_annotations, "
            "updated_at = excluded.updated_at",
            (server, version.name, version.digest, version.description, version.input_schema,
             version.annotations, version.digest, version.description, version.input_schema,
             version.annotations, now, now),
        )

    def propose_change(self, server: str, version: Version, now: float | None = None) -> None:
        """A changed version of an approved tool, stored beside it until a human answers."""
        now = time.time() if now is None else now
        self._write(
            "UPDATE pins SET pending_digest = ?, pending_description = ?, pending_schema = ?, "
            "pending_annotations = ?, updated_at = ? WHERE server = ? AND tool = ?",
            (version.digest, version.description, version.input_schema, version.annotations,
             now, server, version.name),
        )

    def reject(self, server: str, tool: str, pending_digest: str,
               now: float | None = None) -> bool:
        """Refuse a pending change; the pending columns stay so the proxy knows which version
        to refuse. False when that change is no longer the pending one."""
        cur = self._db.execute(
            "UPDATE pins SET status = 'rejected', updated_at = ? "
            "WHERE server = ? AND tool = ? AND pending_digest = ?",
            (time.time() if now is None else now, server, tool, pending_digest),
        )
        return cur.rowcount > 0
