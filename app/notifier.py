"""Desktop notifications for denials and blocked injections, rate-limited, clickable."""

from __future__ import annotations

import sqlite3
from typing import Any

from PySide6.QtCore import QObject, Signal

from app import history_query as hq
from app.rate_limit import RateLimiter
from app.tray import Tray
from proxy.store.database import Database


class Notifier(QObject):
    open_event = Signal(int)  # events.id the last notification was about
    open_window = Signal()  # the notification was not about one event

    def __init__(self, tray: Tray, conn: sqlite3.Connection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tray = tray
        self.conn = conn
        self.history = hq.History(conn)
        self.events = Database(conn).events
        self.limiter = RateLimiter(limit=3, window_s=60)
        self.last: dict[str, Any] | None = None
        self._own: set[tuple[str, str]] = set()  # (session, tool) answered or missed here
        tray.message_clicked.connect(self._clicked)

    def expect_own(self, question: Any) -> None:
        """The person answered this question here: the proxy's deny notice is not news."""
        self._own.add((question.session_id, question.tool))

    def notice(self, msg: dict[str, Any]) -> bool:
        """Show one notice unless the limit is reached; True when shown."""
        key = (str(msg.get("session_id") or ""), str(msg.get("tool") or ""))
        if msg.get("decided_by") in ("app", "timeout") and key in self._own:
            self._own.discard(key)  # already told (a timeout), or the person's own answer
            return False
        if msg.get("decided_by") == "app":
            return False
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

    def missed(self, question: Any) -> bool:
        """A question timed out unanswered: say so once, calmly (the call was denied)."""
        self.expect_own(question)
        if not self.limiter.allow():
            return False
        self.last = None
        self.tray.notify(f"Nobody answered: {question.tool} on {question.server} was denied",
                         "The question timed out, so Gatewatch denied the call. "
                         "The client may ask again.")
        return True

    def event_id_of(self, msg: dict[str, Any]) -> int | None:
        trace = msg.get("trace_id")
        if isinstance(trace, str) and trace:
            found = self.history.find_by_trace(trace)
            if found is not None:
                return found
        ts = msg.get("event_ts")
        if isinstance(ts, (int, float)):
            session = msg.get("session_id")
            return self.events.nearest_decision(session if isinstance(session, str) else None,
                                                ts)
        return None

    def _clicked(self) -> None:
        event_id = self.event_id_of(self.last) if self.last is not None else None
        if event_id is not None:
            self.open_event.emit(event_id)
        else:
            self.open_window.emit()
