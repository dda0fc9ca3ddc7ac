"""Trusted destinations: what a human approved for good (server + tool + destination)."""

from __future__ import annotations

import sqlite3
import time

from PySide6.QtCore import Qt, Signal
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
from proxy.ask.trust import Grant

HEADERS = ("Server", "Tool", "Destination", "Since", "Expires", "By", "State")


class TrustTab(QWidget):
    changed = Signal()  # trust changed: proxies should reload

    def __init__(self, conn: sqlite3.Connection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conn = conn
        self._grants: list[Grant] = []

        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.show_inactive = QCheckBox("Show expired and revoked")
        self.revoke_button = QPushButton("Revoke")
        self.revoke_button.setEnabled(False)

        self.server = QLineEdit(placeholderText="gmail")
        self.tool = QLineEdit(placeholderText="send_email")
        self.destination = QLineEdit(placeholderText="someone@example.com")
        self.expiry = QComboBox()
        for text, _ in EXPIRY_CHOICES:
            self.expiry.addItem(text)
        self.add_button = QPushButton("Trust")
        self.error = QLabel()
        self.error.setStyleSheet("color: #b3261e")
        self.error.setTextFormat(Qt.TextFormat.PlainText)

        top = QHBoxLayout()
        top.addWidget(QLabel("Calls to these destinations are allowed without asking."), 1)
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
        self.refresh()

    def refresh(self) -> None:
        self._grants = store.grants(self.conn, include_inactive=self.show_inactive.isChecked())
        self.table.setRowCount(len(self._grants))
        for r, g in enumerate(self._grants):
            values = (g.server, g.tool, g.destination, clock(g.created_at),
                      clock(g.expires_at) or "never", g.decided_by or "", store.grant_state(g))
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, c, item)
        self._selection_changed()

    def _selection_changed(self) -> None:
        grant = self.selected()
        self.revoke_button.setEnabled(grant is not None and store.grant_state(grant) == "active")

    def selected(self) -> Grant | None:
        rows = self.table.selectionModel().selectedRows()
        return self._grants[rows[0].row()] if rows else None

    def revoke_selected(self) -> None:
        grant = self.selected()
        if grant is not None and store.revoke_grant(self.conn, grant.id):
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
