"""Audit retention: drop history older than `retention_days` (settings.yaml; 0 keeps all).

Runs off the hot path, at most once a day across all proxies (a stamp file), and deletes in
small transactions so the other proxies' audit writers never wait long for the write lock.
"""

from __future__ import annotations

import time
from pathlib import Path

from proxy.store.schema import connect

PRUNE_EVERY_S = 24 * 3600
CHUNK = 5000

# table -> its time column; sessions only once they have ended
TABLES = {
    "events": "ts",
    "taint": "ts",
    "hot_results": "ts",
    "classifier_cache": "created_at",
    "sessions": "ended_at",
}


def prune(db_path: Path, retention_days: int, *, now: float | None = None) -> dict[str, int]:
    """Delete rows older than the retention window; returns how many per table."""
    if retention_days <= 0:
        return {}
    cutoff = (time.time() if now is None else now) - retention_days * 86400
    removed: dict[str, int] = {}
    conn = connect(db_path)
    try:
        for table, column in TABLES.items():
            removed[table] = 0
            while True:
                # Table and column names come from TABLES above, never from input.
                cur = conn.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} "
                    f"WHERE {column} < ? LIMIT {CHUNK})",
                    (cutoff,),
                )
                removed[table] += cur.rowcount
                if cur.rowcount < CHUNK:
                    break
    finally:
        conn.close()
    return removed


def prune_if_due(db_path: Path, retention_days: int, stamp: Path) -> dict[str, int] | None:
    """prune() unless some proxy already did within the last day."""
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_S:
            return None
    except FileNotFoundError:
        pass
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    return prune(db_path, retention_days)
