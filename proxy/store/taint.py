"""The `taint` table: destination-shaped values seen in untrusted tool output, every proxy's."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from proxy.store.database import Write

# Parameters per query: under SQLite's oldest default limit on bound variables (999).
SQL_VALUES = 900


@dataclass(frozen=True)
class TaintRow:
    value: str
    server: str
    tool: str | None
    session_id: str | None
    ts: float
    provenance: str
    kind: str | None


class TaintStore:
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        self._db = db
        self._write = write

    def record_all(self, rows: list[tuple[str, str, str, str, str, str, float]]) -> None:
        """(value, kind, provenance, server, tool, session_id, ts) rows in one statement: a
        result can hold thousands of links, and a queued statement each cost more than the
        scan that found them."""
        if rows:
            self._write(
                "INSERT INTO taint (value, kind, provenance, server, tool, session_id, ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                list(rows),
            )

    def sightings(self, values: Sequence[str]) -> list[TaintRow]:
        """For each of `values`, the first sighting of each provenance, as a value and as a
        link's host, oldest first: at most four rows a value, so a value seen in thousands of
        results never crowds out the one a decision needs. Many values (every link of a send's
        content) are read in a few queries of up to SQL_VALUES each, every value's rows in
        one of them."""
        out: list[TaintRow] = []
        for at in range(0, len(values), SQL_VALUES):
            chunk = tuple(values[at:at + SQL_VALUES])
            rows = self._db.execute(
                "SELECT value, server, tool, session_id, MIN(ts), provenance, kind FROM taint "
                f"WHERE value IN ({', '.join('?' * len(chunk))}) "
                "GROUP BY value, provenance, kind = 'url_host' ORDER BY MIN(ts)",
                chunk,
            ).fetchall()
            out += [TaintRow(*tuple(row)) for row in rows]
        return out

    def paths_under(self, site: str) -> list[str]:
        """Every tainted value with a path on `site` (`site/...`): a range of the value index."""
        rows = self._db.execute(
            "SELECT DISTINCT value FROM taint WHERE value >= ? AND value < ?",
            (site + "/", site + "0"),  # '0' is the character after '/'
        ).fetchall()
        return [row[0] for row in rows]
