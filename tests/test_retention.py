"""Audit retention removes what is older than the window and keeps the rest."""

from __future__ import annotations

import time
from pathlib import Path

from proxy.store.retention import prune, prune_if_due
from proxy.store.schema import connect

DAY = 86400.0


def seed(db: Path, now: float) -> None:
    conn = connect(db)
    for age_days in (1, 10, 40, 400):
        ts = now - age_days * DAY
        conn.execute(
            "INSERT INTO events (ts, session_id, server, direction, kind)"
            " VALUES (?, 's', 'x', 'c2s', 'request')",
            (ts,),
        )
        conn.execute(
            "INSERT INTO taint (value, kind, provenance, server, ts)"
            " VALUES (?, 'email', 'free_text', 'x', ?)",
            (f"a{age_days}@evil.example", ts),
        )
    conn.execute(
        "INSERT INTO sessions (id, server, command, started_at, ended_at)"
        " VALUES ('old', 'x', '[]', ?, ?)",
        (now - 50 * DAY, now - 50 * DAY),
    )
    conn.execute(
        "INSERT INTO sessions (id, server, command, started_at) VALUES ('live', 'x', '[]', ?)",
        (now - 50 * DAY,),
    )
    conn.close()


def test_prune_keeps_the_window_and_running_sessions(db_file: Path) -> None:
    now = time.time()
    seed(db_file, now)
    removed = prune(db_file, 30, now=now)
    assert removed["events"] == 2 and removed["taint"] == 2 and removed["sessions"] == 1
    conn = connect(db_file)
    ages = sorted(round((now - r[0]) / DAY) for r in conn.execute("SELECT ts FROM events"))
    assert ages == [1, 10]
    assert [r[0] for r in conn.execute("SELECT id FROM sessions")] == ["live"]


def test_zero_keeps_everything_and_pruning_runs_once_a_day(db_file: Path, tmp_path: Path) -> None:
    now = time.time()
    seed(db_file, now)
    assert prune(db_file, 0) == {}
    stamp = tmp_path / "last-prune"
    assert prune_if_due(db_file, 30, stamp) is not None
    assert prune_if_due(db_file, 30, stamp) is None  # another proxy already did today
    assert connect(db_file).execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2
