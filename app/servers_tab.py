"""Servers tab: the live proxies, pause/resume per server, and tool changes to approve."""

from __future__ import annotations

import sqlite3
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import history_query as hq
from app import store
from app.diff_view import DiffView
from app.hub import Hub
from app.live_proxies import uptime_text
from app.outcomes import outcome_text
from app.wording import clock

PIN_STATES = {
    "approved": "changed — awaiting you",
    "pending": "new — awaiting you",
    "rejected": "rejected",
}
FLAGGED = "looks like a prompt injection — awaiting you"
ENDED_HEADERS = ("Server", "Client", "PID", "Started", "Stopped", "How it ended")
PROXY_HEADERS = ("Server", "Client", "PID", "Uptime", "Calls", "Denied", "Last call", "State")


def _item(text: object) -> QTableWidgetItem:
    item = QTableWidgetItem("" if text is None else str(text))
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    return item


class ServersTab(QWidget):
    pause_changed = Signal()  # a server was paused or resumed

    def __init__(self, conn: sqlite3.Connection, hub: Hub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conn = conn
        self.history = hq.History(conn)
        self.hub = hub

        self.proxies = QTableWidget(0, len(PROXY_HEADERS))
        self.proxies.setHorizontalHeaderLabels(PROXY_HEADERS)
        self.proxies.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.proxies.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.proxies.verticalHeader().setVisible(False)
        self.proxies.setWordWrap(False)
        header = self.proxies.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.empty = QLabel("No MCP server is running through Gatewatch right now. "
                            "Wrap your clients' servers in the Clients tab.")
        self.empty.setWordWrap(True)
        self.pause_button = QPushButton("Pause server")
        self.pause_button.setToolTip("While paused, every call to this server is denied")
        self.pause_button.clicked.connect(self._toggle_pause)

        self.pins = QTableWidget(0, 3)
        self.pins.setHorizontalHeaderLabels(("Server", "Tool", "State"))
        self.pins.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.pins.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.pins.verticalHeader().setVisible(False)
        self.pins.setWordWrap(False)
        self.pins.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.pins.horizontalHeader().setStretchLastSection(True)
        self.diff = DiffView()
        self.diff.setPlaceholderText("Select a changed tool to see what changed.")
        self.approve_button = QPushButton("Approve change")
        self.reject_button = QPushButton("Reject change")
        self.approve_button.clicked.connect(lambda: self._decide_pin(approve=True))
        self.reject_button.clicked.connect(lambda: self._decide_pin(approve=False))
        self._changes: list[store.PinChange] = []
        self._diff_key: tuple[str, str, str, str] | None = None

        self.ended = QTableWidget(0, len(ENDED_HEADERS))
        self.ended.setHorizontalHeaderLabels(ENDED_HEADERS)
        self.ended.verticalHeader().setVisible(False)
        self.ended.setWordWrap(False)
        self.ended.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.ended.horizontalHeader().setStretchLastSection(True)

        live = QGroupBox("Running servers")
        live_layout = QVBoxLayout(live)
        live_layout.addWidget(self.empty)
        live_layout.addWidget(self.proxies)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.pause_button)
        live_layout.addLayout(row)
        changed = QGroupBox("Tools that changed since you approved them")
        changed_layout = QHBoxLayout(changed)
        left = QVBoxLayout()
        left.addWidget(self.pins)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.approve_button)
        left.addLayout(buttons)
        changed_layout.addLayout(left, 2)
        changed_layout.addWidget(self.diff, 3)
        ended = QGroupBox("Recently stopped")
        QVBoxLayout(ended).addWidget(self.ended)
        layout = QVBoxLayout(self)
        layout.addWidget(live, 3)
        layout.addWidget(changed, 3)
        layout.addWidget(ended, 2)

        hub.proxies_changed.connect(self.refresh_proxies)
        self.proxies.itemSelectionChanged.connect(self._update_pause_button)
        self.pins.itemSelectionChanged.connect(self._show_diff)
        self._clock = QTimer(self, interval=5000)
        self._clock.timeout.connect(self.refresh)
        self._clock.start()
        self.refresh()

    def refresh(self) -> None:
        self.refresh_proxies()
        self.refresh_pins()
        self.refresh_ended()

    def refresh_ended(self) -> None:
        sessions = store.recent_sessions(self.conn)
        self.ended.setRowCount(len(sessions))
        for r, s in enumerate(sessions):
            outcome = s.end_reason or ("" if s.exit_code is None else f"exit {s.exit_code}")
            values = (s.server, s.client or "—", s.pid, clock(s.started_at),
                      clock(s.ended_at), outcome)
            for c, value in enumerate(values):
                self.ended.setItem(r, c, _item(value))

    def refresh_proxies(self) -> None:
        selected = self.selected_server()
        paused = store.paused_servers(self.conn)
        proxies = sorted(self.hub.proxies(), key=lambda p: (p.server, p.started_at))
        self.proxies.setRowCount(len(proxies))
        now = time.time()
        for r, p in enumerate(proxies):
            state = "paused" if p.paused or p.server in paused or store.ALL_SERVERS in paused \
                else "running"
            last = self.history.last_call(p.session_id)
            values = (p.server, p.client_label, p.pid, uptime_text(p.started_at, now), p.calls,
                      p.denied, f"{last.tool}: {outcome_text(last)}" if last else "—", state)
            for c, value in enumerate(values):
                self.proxies.setItem(r, c, _item(value))
            if p.server == selected:
                self.proxies.selectRow(r)
        self.empty.setVisible(not proxies)
        self.proxies.setVisible(bool(proxies))
        self._update_pause_button()

    def selected_server(self) -> str | None:
        rows = self.proxies.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.proxies.item(rows[0].row(), 0)
        return item.text() if item else None

    def _update_pause_button(self) -> None:
        server = self.selected_server()
        self.pause_button.setEnabled(server is not None)
        paused = server is not None and server in store.paused_servers(self.conn)
        self.pause_button.setText(f"Resume {server}" if paused else
                                  f"Pause {server}" if server else "Pause server")

    def _toggle_pause(self) -> None:
        server = self.selected_server()
        if server is None:
            return
        pause = server not in store.paused_servers(self.conn)
        store.set_paused(self.conn, server, pause)
        self.hub.broadcast({"type": "control", "action": "pause" if pause else "resume"}, server)
        self.pause_changed.emit()
        self.refresh_proxies()

    def refresh_pins(self) -> None:
        chosen = self._selected_change()
        keep = (chosen.server, chosen.tool) if chosen else None
        self._changes = store.pin_changes(self.conn)
        self.pins.blockSignals(True)
        self.pins.setRowCount(len(self._changes))
        for r, change in enumerate(self._changes):
            state = PIN_STATES[change.status]
            if change.status != "rejected" and self.history.flagged_tool(change.server,
                                                               change.tool):
                state = FLAGGED
            for c, value in enumerate((change.server, change.tool, state)):
                self.pins.setItem(r, c, _item(value))
            if (change.server, change.tool) == keep:
                self.pins.selectRow(r)  # a periodic refresh must not lose the user's place
        self.pins.blockSignals(False)
        self._show_diff()

    def _selected_change(self) -> store.PinChange | None:
        rows = self.pins.selectionModel().selectedRows()
        return self._changes[rows[0].row()] if rows and rows[0].row() < len(self._changes) else None

    def _show_diff(self) -> None:
        change = self._selected_change()
        key = (change.server, change.tool, change.pending.digest, change.status) if change \
            else None
        if key is not None and self._diff_key == key:
            return  # unchanged: keep the reader's scroll position
        self._diff_key = key
        self.approve_button.setEnabled(change is not None)
        self.reject_button.setEnabled(change is not None and change.status != "rejected")
        if change is None:
            self.diff.clear()
        else:
            self.diff.setPlainText(change.diff() or "(no textual difference)")

    def _decide_pin(self, approve: bool) -> None:
        change = self._selected_change()
        if change is None:
            return
        if approve:
            store.approve_pin(self.conn, change)
        else:
            store.reject_pin(self.conn, change)
        self.hub.broadcast({"type": "control", "action": "reload"}, change.server)
        self.refresh_pins()
