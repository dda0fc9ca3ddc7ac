"""Sessions whose proxy vanished without recording its end.

Some clients stop a server harder than a proxy can answer: Codex sends SIGTERM to the process
group and SIGKILL about a millisecond later, so the proxy never writes its end. The next proxy
to start closes such sessions, so History and `gatewatch logs` do not show them as running.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

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


def close_vanished(
    conn: sqlite3.Connection,
    *,
    alive: Callable[[int], bool] = pid_alive,
) -> int:
    """Mark open sessions whose proxy pid no longer runs as ended at their last audit row.

    Returns how many were closed. A reused pid keeps a session open (the safe mistake).
    """
    rows = conn.execute(
        "SELECT id, pid FROM sessions WHERE ended_at IS NULL AND pid IS NOT NULL"
    ).fetchall()
    gone = [row[0] for row in rows if row[1] != os.getpid() and not alive(int(row[1]))]
    for session_id in gone:
        conn.execute(
            "UPDATE sessions SET ended_at = COALESCE("
            "(SELECT ts FROM events WHERE session_id = ? ORDER BY id DESC LIMIT 1), started_at), "
            "end_reason = ? WHERE id = ? AND ended_at IS NULL",
            (session_id, VANISHED, session_id),
        )
    return len(gone)
