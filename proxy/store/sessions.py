"""The `sessions` table: one row per proxy run, and the sessions whose proxy vanished.

Some clients stop a server harder than a proxy can answer: Codex sends SIGTERM to the process
group and SIGKILL about a millisecond later, so the proxy never writes its end. The next proxy
to start closes such sessions, so History and `gatewatch logs` do not show them as running.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from proxy.store.database import Write

VANISHED = "proxy vanished (killed before it could record its end)"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now holds the pid: not ours, but alive
        return True
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class SessionRow:
    server: str
    client: str
    pid: int | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    exit_code: int | None


class SessionRecorder:
    """What a proxy records about its own session, through `write` (its audit queue)."""

    def __init__(self, write: Write) -> None:
        self._write = write

    def started(self, session_id: str, server: str, command: str, pid: int | None,
                upstream_pid: int | None, started_at: float) -> None:
        """`command`: the JSON argv, secrets redacted."""
        self._write(
            "INSERT INTO sessions (id, server, command, pid, upstream_pid, started_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, server, command, pid, upstream_pid, started_at),
        )

    def client_known(self, session_id: str, *, name: str | None, version: str | None,
                     protocol_version: str | None, era: str | None, can_elicit: bool) -> None:
        self._write(
            "UPDATE sessions SET client_name = ?, client_version = ?, protocol_version = ?, "
            "era = ?, can_elicit = ? WHERE id = ?",
            (name, version, protocol_version, era, int(can_elicit), session_id),
        )

    def ended(self, session_id: str, ended_at: float, exit_code: int | None,
              reason: str | None) -> None:
        self._write(
            "UPDATE sessions SET ended_at = ?, exit_code = ?, end_reason = ? WHERE id = ?",
            (ended_at, exit_code, reason, session_id),
        )



class Sessions(SessionRecorder):
    def __init__(self, db: sqlite3.Connection, write: Write) -> None:
        super().__init__(write)
        self._db = db

    def clients(self, session_ids: set[str]) -> dict[str, str]:
        """Each session's client as its clientInfo named it ("claude-code 2.1.3"); sessions
        whose client has not said yet are left out."""
        ids = sorted(session_ids)
        out: dict[str, str] = {}
        for start in range(0, len(ids), 500):  # under SQLite's parameter limit
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT id, client_name, client_version FROM sessions WHERE id IN ({marks}) "
                "AND client_name IS NOT NULL",
                chunk,
            ):
                out[row[0]] = " ".join(part for part in (row[1], row[2]) if part)
        return out

    def recent(self, limit: int = 50) -> list[SessionRow]:
        """Sessions that ended, newest first: what ran while nobody was looking."""
        rows = self._db.execute(
            "SELECT server, COALESCE(client_name || ' ' || COALESCE(client_version, ''), ''),"
            " pid, started_at, ended_at, end_reason, exit_code FROM sessions"
            " WHERE ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [SessionRow(r[0], r[1].strip(), r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def close_vanished(self, *, alive: Callable[[int], bool] = pid_alive) -> int:
        """Mark open sessions whose proxy pid no longer runs as ended at their last audit row.

        Returns how many were closed. A reused pid keeps a session open (the safe mistake).
        """
        rows = self._db.execute(
            "SELECT id, pid FROM sessions WHERE ended_at IS NULL AND pid IS NOT NULL"
        ).fetchall()
        gone = [row[0] for row in rows if row[1] != os.getpid() and not alive(int(row[1]))]
        for session_id in gone:
            self._db.execute(
                "UPDATE sessions SET ended_at = COALESCE((SELECT ts FROM events WHERE "
                "session_id = ? ORDER BY id DESC LIMIT 1), started_at), "
                "end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (session_id, VANISHED, session_id),
            )
        return len(gone)
