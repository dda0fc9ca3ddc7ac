"""A scratch database for a hypothetical verdict (`gatewatch check`, the MCP tool
`check_verdict`): the engine may pin, count and taint there as it likes, and the user's audit
log is never written. The user's live remembered approvals for the call are copied in, since
they decide a real call too."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from proxy.store.schema import connect


def scratch_with_trust(server: str, tool: str, source: Path) -> sqlite3.Connection:
    """An in-memory database holding `source`'s valid grants for `server` and `tool` (or
    every tool: `*`). Raises sqlite3.Error when `source` exists but cannot be read."""
    rows: list[sqlite3.Row] = []
    if source.exists():
        real = connect(source, readonly=True)
        try:
            rows = real.execute(
                "SELECT server, tool, destination, created_at, expires_at FROM trust "
                "WHERE server = ? AND tool IN (?, '*') AND revoked_at IS NULL "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (server, tool, time.time()),
            ).fetchall()
        finally:
            real.close()
    scratch = connect(":memory:")
    scratch.executemany(
        "INSERT INTO trust (server, tool, destination, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?)", [tuple(row) for row in rows],
    )
    return scratch
