"""The `classifier_cache` table: the local classifier's answers by SHA-256 of what it read."""

from __future__ import annotations

import sqlite3
import time


class ClassifierAnswers:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, key: str) -> tuple[str, float] | None:
        """(label, score) cached under `key`, if any."""
        row = self._db.execute(
            "SELECT label, score FROM classifier_cache WHERE sha256 = ?", (key,)
        ).fetchone()
        return (row[0], float(row[1])) if row is not None else None

    def put(self, key: str, model: str, label: str, score: float,
            now: float | None = None) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO classifier_cache (sha256, model, label, score, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (key, model, label, score, time.time() if now is None else now),
        )
