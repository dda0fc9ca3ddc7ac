"""The audit log as a lazy table model: keyset pages on demand, new rows on poll.

Holds only the rows the view has scrolled to; the database stays the source of truth. In the
calls view a row is one call, and a call still waiting for its answer is read again on each
poll, so its outcome appears in place.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from app import history_query as hq
from app.outcomes import frame_text, outcome_text, severity
from app.wording import clock
from proxy.store import schema

CALL_HEADERS = ("Time", "Server", "Tool", "What happened")
FRAME_HEADERS = ("Time", "Server", "Tool or method", "Frame", "Reason")
# Readable on light and dark backgrounds alike.
_COLORS = {"bad": "#d0453c", "waiting": "#c08a1e", "good": "#3a9a6e"}
Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """Indexed filters and free text of 3+ characters (the FTS index, plus a scan of the few
    newest rows it has not reached yet) load pages inline: a page costs about what reading one
    costs, whatever the table size. Shorter text must scan, so its pages load on a worker
    thread with its own read-only connection."""

    searching = Signal(bool)
    _page_loaded = Signal(int, object)  # generation, rows (from the worker thread)

    def __init__(self, conn: sqlite3.Connection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._history = hq.History(conn)
        self._db_path = self._history.database_path()
        self._rows: list[hq.Row] = []
        self._filter = hq.HistoryFilter()
        self._exhausted = False
        self._loading = False
        self._generation = 0  # bumps on every new filter: late pages of an old one are dropped
        self._seen_id = 0
        self._ceiling = 0
        self._page_loaded.connect(self._append_page)
        self.set_filter(self._filter)

    # -- filtering and live updates -----------------------------------------------------------

    @property
    def filter(self) -> hq.HistoryFilter:
        return self._filter

    @property
    def loading(self) -> bool:
        return self._loading

    def set_filter(self, filt: hq.HistoryFilter) -> None:
        self.beginResetModel()
        self._generation += 1
        self._filter = filt
        self._seen_id = self._history.max_id()
        self._ceiling = self._seen_id  # newer rows come through poll(), never through pages
        self._rows = []
        self._exhausted = False
        self._set_loading(False)
        self.endResetModel()
        self.fetchMore(QModelIndex())

    @property
    def headers(self) -> tuple[str, ...]:
        return FRAME_HEADERS if self._filter.all_frames else CALL_HEADERS

    def poll(self) -> int:
        """Prepend rows written since the last look, and update calls whose answer came;
        how many rows arrived."""
        top = self._history.max_id()
        if top <= self._seen_id:
            return 0
        fresh = self._history.newer(self._filter, self._seen_id)
        self._seen_id = top
        if len(fresh) >= hq.NEWER_LIMIT:  # a flood: start over rather than leave a gap
            self.set_filter(self._filter)
            return len(fresh)
        self._update_open_calls()
        if not fresh:
            return 0
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[0:0] = fresh
        self.endInsertRows()
        return len(fresh)

    def _update_open_calls(self) -> None:
        waiting = [i for i, r in enumerate(self._rows[:2000]) if hq.is_open(r)]
        if not waiting:
            return
        again = self._history.reread([self._rows[i].id for i in waiting])
        for i in waiting:
            row = again.get(self._rows[i].id)
            if row is not None and row != self._rows[i]:
                self._rows[i] = row
                self.dataChanged.emit(self.index(i, 0), self.index(i, self.columnCount() - 1))

    def event_id(self, row: int) -> int:
        return int(self._rows[row].id)

    def row_data(self, row: int) -> hq.Row:
        return self._rows[row]

    def row_of(self, event_id: int) -> int | None:
        """Row of an event, loading pages until it shows up (None if the filter hides it)."""
        while True:
            for i, r in enumerate(self._rows):
                if r.id == event_id:
                    return i
            if not self.canFetchMore(QModelIndex()):
                return None
            self.fetchMore(QModelIndex())

    # -- QAbstractTableModel ------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.headers)):
            return self.headers[section]
        return None

    def text(self, row: hq.Row, column: int) -> str:
        if column == 0:
            return clock(row.ts)
        if column == 1:
            return row.server
        if column == 2:
            return row.tool or row.method or ""
        if self._filter.all_frames:
            return frame_text(row) if column == 3 else (row.reason or "")
        return outcome_text(row)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == 3:
            color = _COLORS.get(severity(row))
            return QColor(color) if color else None
        if role == Qt.ItemDataRole.ToolTipRole and column >= 3:
            return self.text(row, column) or None
        return None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._exhausted and not self._loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not self.canFetchMore(parent):
            return
        after = (self._rows[-1].ts, self._rows[-1].id) if self._rows else None
        if hq.uses_index(self._filter):
            self._append_page(self._generation, self._history.page(self._filter, after))
            return
        self._set_loading(True)
        threading.Thread(
            target=self._load_in_background,
            args=(self._generation, self._filter, after),
            daemon=True,
        ).start()

    def _load_in_background(
        self, generation: int, filt: hq.HistoryFilter, after: tuple[float, int] | None
    ) -> None:
        conn = schema.connect(self._db_path, readonly=True)
        try:
            rows = hq.History(conn).page(filt, after)
        finally:
            conn.close()
        self._page_loaded.emit(generation, rows)  # queued to the GUI thread

    def _append_page(self, generation: int, more: list[hq.Row]) -> None:
        if generation != self._generation:
            return
        self._set_loading(False)
        self._exhausted = len(more) < hq.PAGE
        more = [r for r in more if r.id <= self._ceiling]
        if more:
            start = len(self._rows)
            self.beginInsertRows(QModelIndex(), start, start + len(more) - 1)
            self._rows.extend(more)
            self.endInsertRows()

    def _set_loading(self, loading: bool) -> None:
        if loading != self._loading:
            self._loading = loading
            self.searching.emit(loading)
