"""Desktop notifications for denials and blocked injections, rate-limited, clickable."""

from __future__ import annotations

import sqlite3
from typing import Any

from PySide6.QtCore import QObject, Signal

from app import history_query as hq
from app.rate_limit import RateLimiter
from app.tray import Tray


class Notifier(QObject):
    open_event = Signal(int)  # events.id the last notification was about
    open_window = Signal()  # the notification was not about one event

    def __init__(self, tray: Tray, conn: sqlite3.Connection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tray = tray
        self.conn = conn
        self.limiter = RateLimiter(limit=3, window_s=60)
        self.last: dict[str, Any] | None = None
        tray.message_clicked.connect(self._clicked)

    def notice(self, msg: dict[str, Any]) -> bool:
        """Show one notice unless the limit is reached; True when shown."""
        if not self.limiter.allow():
            return False
        verdict = msg.get("verdict")
        what = "blocked a suspicious result from" if verdict == "block" else "denied"
        title = f"Gatewatch {what} {msg.get('tool') or 'a call'} on {msg.get('server') or '?'}"
        text = str(msg.get("reason") or "")
        skipped = self.limiter.take_suppressed()
        if skipped:
            text += f"\n(+{skipped} more since the last notification; see History)"
        self.last = msg
        self.tray.notify(title, text, critical=verdict == "block")
        return True

    def missed(self, server: str, tool: str) -> bool:
        """A question timed out unanswered: say so once, calmly (the call was denied)."""
        if not self.limiter.allow():
            return False
        self.last = None
        self.tray.notify(f"Gatewatch denied {tool} on {server}",
                         "Nobody answered in time, so the call was denied. "
                         "The client may ask again.")
        return True

    def event_id_of(self, msg: dict[str, Any]) -> int | None:
        trace = msg.get("trace_id")
        if isinstance(trace, str) and trace:
            found = hq.find_by_trace(self.conn, trace)
            if found is not None:
                return found
        ts = msg.get("event_ts")
        if isinstance(ts, (int, float)):
            row = self.conn.execute(
                "SELECT id FROM events WHERE session_id = ? AND verdict IS NOT NULL "
                "ORDER BY abs(ts - ?) LIMIT 1",
                (msg.get("session_id"), ts),
            ).fetchone()
            return int(row[0]) if row else None
        return None

    def _clicked(self) -> None:
        event_id = self.event_id_of(self.last) if self.last is not None else None
        if event_id is not None:
            self.open_event.emit(event_id)
        else:
            self.open_window.emit()
