"""History tab: filters, the lazy audit table, a detail pane that explains, and export."""

from __future__ import annotations

import sqlite3
import time

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app import history_query as hq
from app import wording
from app.history_model import HistoryModel
from app.outcomes import FRAME_CHOICES, OUTCOME_CHOICES

ANY = "Any"
RANGES: list[tuple[str, float | None]] = [
    ("Any time", None),
    ("Last hour", 3600.0),
    ("Last 24 hours", 86400.0),
    ("Last 7 days", 7 * 86400.0),
    ("Last 30 days", 30 * 86400.0),
]
POLL_MS = 1000


class HistoryTab(QWidget):
    def __init__(self, conn: sqlite3.Connection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conn = conn
        self.history = hq.History(conn)
        self.model = HistoryModel(conn, self)

        self.server = self._combo("server")
        self.tool = self._combo("tool")
        self.verdict = QComboBox()
        self.verdict.setToolTip("What happened to the call")
        self._fill_verdicts(OUTCOME_CHOICES)
        self.range = QComboBox()
        self.range.addItems([label for label, _ in RANGES])
        self.text = QLineEdit(placeholderText="Search tools, servers, reasons, arguments, "
                                              "destinations, trace ids…")
        self.text.setClearButtonEnabled(True)
        self.all_frames = QCheckBox("&All frames")
        self.all_frames.setToolTip("Show every message as recorded (requests, answers, results),"
                                   " not one row per call")
        self.searching = QLabel("Searching…")
        self.searching.setVisible(False)
        self.short_text = QLabel("Searching recent history only: type 3 or more characters "
                                 "to search all of it")
        self.short_text.setObjectName("note")
        self.short_text.setVisible(False)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the rows that match the filters as CSV or JSON")

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in enumerate((150, 120, 160)):
            header.resizeSection(column, width)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.detail = QPlainTextEdit(readOnly=True)
        self.detail.setObjectName("detail")
        self.detail.setPlaceholderText("Select a call to see what happened and why.")

        filters = QHBoxLayout()
        for widget in (self.server, self.tool, self.verdict, self.range):
            filters.addWidget(widget)
        filters.addWidget(self.text, 1)
        filters.addWidget(self.searching)
        filters.addWidget(self.all_frames)
        filters.addWidget(self.export_button)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.short_text)
        layout.addWidget(splitter, 1)

        self._debounce = QTimer(self, singleShot=True, interval=250)
        self._debounce.timeout.connect(self.apply_filters)
        self.text.textChanged.connect(self._debounce.start)
        for combo in (self.server, self.tool, self.verdict, self.range):
            combo.currentTextChanged.connect(self._debounce.start)
        self.all_frames.toggled.connect(self._view_changed)
        self.export_button.clicked.connect(self.export)
        self.model.searching.connect(self.searching.setVisible)
        self.table.selectionModel().currentRowChanged.connect(self._show_detail)
        self._poll = QTimer(self, interval=POLL_MS)
        self._poll.timeout.connect(self.model.poll)
        self._poll.start()
        self.refresh_choices()

    def _combo(self, name: str) -> QComboBox:
        combo = QComboBox()
        combo.setEditable(True)
        combo.setMinimumWidth(120)
        combo.setToolTip(name)
        combo.lineEdit().setPlaceholderText(name)  # type: ignore[union-attr]
        return combo

    def _fill_verdicts(self, choices: list[tuple[str, str | None]]) -> None:
        chosen = self.verdict.currentData()
        self.verdict.blockSignals(True)
        self.verdict.clear()
        for label, value in choices:
            self.verdict.addItem(label, value)
        self.verdict.setCurrentIndex(max(0, self.verdict.findData(chosen)))
        self.verdict.blockSignals(False)

    def _view_changed(self, all_frames: bool) -> None:
        self._fill_verdicts(FRAME_CHOICES if all_frames else OUTCOME_CHOICES)
        self.verdict.setToolTip("Each frame's own verdict" if all_frames
                                else "What happened to the call")
        self.apply_filters()

    def refresh_choices(self) -> None:
        """Offer the servers and tools the log knows."""
        for combo, column in ((self.server, "server"), (self.tool, "tool")):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(f"{ANY} {column}")
            combo.addItems(self.history.distinct_values(column))
            combo.setCurrentText(current or f"{ANY} {column}")
            combo.blockSignals(False)

    def current_filter(self) -> hq.HistoryFilter:
        def chosen(combo: QComboBox) -> str | None:
            text = combo.currentText().strip()
            return None if text in ("", f"{ANY} server", f"{ANY} tool") else text

        span = RANGES[self.range.currentIndex()][1]
        return hq.HistoryFilter(
            server=chosen(self.server),
            tool=chosen(self.tool),
            verdict=self.verdict.currentData(),
            since=time.time() - span if span else None,
            text=self.text.text(),
            all_frames=self.all_frames.isChecked(),
        )

    def apply_filters(self) -> None:
        filt = self.current_filter()
        self.short_text.setVisible(not hq.uses_index(filt))
        self.model.set_filter(filt)
        self.detail.clear()

    def show_event(self, event_id: int) -> bool:
        """Select one event's call (from a notification click), clearing filters that hide it."""
        if not self.all_frames.isChecked():
            event_id = self.history.call_of(event_id) or event_id
        row = self.model.row_of(event_id)
        if row is None:
            for combo in (self.server, self.tool):
                combo.setCurrentIndex(0)
            self.verdict.setCurrentIndex(0)
            self.range.setCurrentIndex(0)
            self.text.clear()
            self._debounce.stop()
            self.apply_filters()
            row = self.model.row_of(event_id)
        if row is None and not self.all_frames.isChecked():
            self.all_frames.setChecked(True)  # not part of any call: show it as a frame
            row = self.model.row_of(event_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(index)
        return True

    def _show_detail(self, current: object, _previous: object) -> None:
        row = getattr(current, "row", lambda: -1)()
        if row < 0:
            self.detail.clear()
            return
        event_id = self.model.event_id(row)
        if self.all_frames.isChecked():
            ev = self.history.event(event_id)
            self.detail.setPlainText(wording.explain_event(ev) if ev else "")
            return
        self.detail.setPlainText(wording.explain_call(self.model.row_data(row),
                                                      self.history.call_frames(event_id)))

    def export(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export history", "gatewatch-history.csv", "CSV (*.csv);;JSON (*.json)"
        )
        if not path:
            return
        as_json = path.endswith(".json") or chosen.startswith("JSON")
        count = self.export_to(path, as_json)
        QMessageBox.information(self, "Export", f"Saved {count} rows to {path}")

    def export_to(self, path: str, as_json: bool) -> int:
        rows = self.history.all_rows(self.model.filter)
        with open(path, "w", encoding="utf-8", newline="") as out:
            return hq.export_json(rows, out) if as_json else hq.export_csv(rows, out)
