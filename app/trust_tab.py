"""Trusted destinations: what a human approved for good (server + tool + destination), and
what they said to always deny. Refreshed while shown: an "Always" answer in a popup lands in the
database through the proxy, a moment later."""

from __future__ import annotations

import sqlite3
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import store
from app.popup import EXPIRY_CHOICES
from app.wording import clock
from proxy.store.trust import Grant

HEADERS = ("Destination", "Server", "Tool", "Rule", "Since", "Expires", "Decided by", "State")
REFRESH_MS = 2000
DECIDED_BY = {"app": "you, in this app", "elicitation": "you, in the AI client",
              "cli": "the command line"}


class TrustTab(QWidget):
    changed = Signal()  # trust changed: proxies should reload

    def __init__(self, conn: sqlite3.Connection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conn = conn
        self._grants: list[Grant] = []
        self._rows: list[tuple[str, int, str]] = []  # (kind, id, state) per table row

        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.show_inactive = QCheckBox("Show expired and revoked")
        self.revoke_button = QPushButton("Revoke")
        self.revoke_button.setEnabled(False)

        # Hints, not values: they say what goes there.
        self.server = QLineEdit(placeholderText="server name, e.g. gmail")
        self.tool = QLineEdit(placeholderText="tool, e.g. send_email")
        self.destination = QLineEdit(placeholderText="address, URL or host")
        self.expiry = QComboBox()
        for text, _ in EXPIRY_CHOICES:
            self.expiry.addItem(text)
        self.add_button = QPushButton("Trust")
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setTextFormat(Qt.TextFormat.PlainText)

        top = QHBoxLayout()
        top.addWidget(QLabel("Calls to trusted destinations are allowed without asking; "
                             "always-denied ones are denied without asking."), 1)
        top.addWidget(self.show_inactive)
        top.addWidget(self.revoke_button)
        add_box = QGroupBox("Trust a destination")
        add_layout = QVBoxLayout(add_box)
        fields = QHBoxLayout()
        for label, widget, stretch in (("Server", self.server, 1), ("Tool", self.tool, 1),
                                       ("Destination", self.destination, 2),
                                       ("Expires", self.expiry, 0)):
            fields.addWidget(QLabel(label))
            fields.addWidget(widget, stretch)
        fields.addWidget(self.add_button)
        add_layout.addLayout(fields)
        add_layout.addWidget(self.error)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(add_box)

        self.show_inactive.toggled.connect(self.refresh)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.add_button.clicked.connect(self.add)
        self._timer = QTimer(self, interval=REFRESH_MS)
        self._timer.timeout.connect(self._refresh_if_changed)
        self._timer.start()
        self._shown: object = None
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def _refresh_if_changed(self) -> None:
        if self.isVisible() and store.trust_fingerprint(self.conn) != self._shown:
            self.refresh()

    def refresh(self) -> None:
        inactive = self.show_inactive.isChecked()
        self._shown = store.trust_fingerprint(self.conn)
        chosen = self.selected_row()
        self._grants = store.grants(self.conn, include_inactive=inactive)
        denials = store.denials(self.conn, include_inactive=inactive)
        rows: list[tuple[tuple[str, ...], tuple[str, int, str]]] = []
        for g in self._grants:
            state = store.grant_state(g)
            rows.append(((g.destination, g.server, g.tool, "trusted", clock(g.created_at),
                          clock(g.expires_at) or "never",
                          DECIDED_BY.get(g.decided_by or "", g.decided_by or ""), state),
                         ("trust", g.id, state)))
        for d in denials:
            state = store.denial_state(d)
            rows.append(((d.destination, d.server, d.tool, "always denied", clock(d.created_at),
                          clock(d.expires_at) or "never",
                          DECIDED_BY.get(d.decided_by or "", d.decided_by or ""), state),
                         ("deny", d.id, state)))
        self._rows = [key for _, key in rows]
        self.table.setRowCount(len(rows))
        for r, (values, key) in enumerate(rows):
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, c, item)
            if key[:2] == chosen:
                self.table.selectRow(r)
        self._selection_changed()

    def selected_row(self) -> tuple[str, int] | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self._rows):
            return None
        kind, row_id, _ = self._rows[rows[0].row()]
        return kind, row_id

    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        active = bool(rows) and rows[0].row() < len(self._rows) and \
            self._rows[rows[0].row()][2] == "active"
        self.revoke_button.setEnabled(active)

    def selected(self) -> Grant | None:
        chosen = self.selected_row()
        if chosen is None or chosen[0] != "trust":
            return None
        return next((g for g in self._grants if g.id == chosen[1]), None)

    def revoke_selected(self) -> None:
        chosen = self.selected_row()
        if chosen is None:
            return
        kind, row_id = chosen
        done = store.revoke_grant(self.conn, row_id) if kind == "trust" else \
            store.revoke_denial(self.conn, row_id)
        if done:
            self.refresh()
            self.changed.emit()

    def add(self) -> None:
        span = EXPIRY_CHOICES[self.expiry.currentIndex()][1]
        try:
            store.add_grant(self.conn, self.server.text(), self.tool.text(),
                            self.destination.text(), time.time() + span if span else None)
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.error.clear()
        self.destination.clear()
        self.refresh()
        self.changed.emit()
