"""Closing sessions whose proxy vanished (pure store logic on a real SQLite file)."""

from __future__ import annotations

import os
from pathlib import Path

from proxy.store.database import Database
from proxy.store.schema import connect
from proxy.store.sessions import VANISHED


def _session(conn, sid: str, pid: int, ended: float | None = None) -> None:  # type: ignore[no-untyped-def]
    conn.execute(
        "INSERT INTO sessions (id, server, command, pid, started_at, ended_at) "
        "VALUES (?, 's', '[]', ?, 10.0, ?)",
        (sid, pid, ended),
    )


def test_only_open_sessions_of_dead_pids_are_closed(tmp_path: Path) -> None:
    conn = connect(tmp_path / "g.db")
    _session(conn, "dead", 111)
    _session(conn, "alive", 222)
    _session(conn, "done", 111, ended=12.0)
    _session(conn, "mine", os.getpid())
    closed = Database(conn).sessions.close_vanished(alive=lambda pid: pid == 222)
    assert closed == 1
    rows = {r["id"]: r for r in conn.execute("SELECT * FROM sessions")}
    assert rows["dead"]["end_reason"] == VANISHED
    assert rows["dead"]["ended_at"] == 10.0  # no audit rows: its start
    assert rows["alive"]["ended_at"] is None and rows["mine"]["ended_at"] is None
    assert rows["done"]["ended_at"] == 12.0 and rows["done"]["end_reason"] is None
    conn.close()
