"""A scratch database for a hypothetical verdict (`gatewatch check`, the MCP tool
`check_verdict`): the engine may pin, count and taint there as it likes, and the user's audit
log is never written. The user's live remembered approvals for the call are copied in, since
they decide a real call too."""

from __future__ import annotations

from pathlib import Path

from proxy.store.database import Database


def scratch_with_trust(server: str, tool: str, source: Path) -> Database:
    """An in-memory database holding `source`'s valid grants for `server` and `tool` (or
    every tool: `*`). Raises sqlite3.Error when `source` exists but cannot be read."""
    scratch = Database.memory()
    if source.exists():
        real = Database.open(source, readonly=True)
        try:
            scratch.trust.copy_in(real.trust.live_for_tool(server, tool))
        finally:
            real.close()
    return scratch
