"""The audit log as a lazy table model: keyset pages on demand, new rows on poll.

Holds only the rows the view has scrolled to; the database stays the source of truth.
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
from app.wording import clock
from proxy.store import schema

HEADERS = ("Time", "Server", "Tool", "Verdict", "Decided by", "Reason")
_FIELDS = (1, 2, 3, 4, 5, 6)  # positions in history_query.COLUMNS
_VERDICT_COLORS = {
    "deny": "#b3261e",
    "block": "#b3261e",
    "ask": "#8a5a00",
    "warn": "#8a5a00",
    "allow": "#1d6b4e",
    "pass": "#1d6b4e",
}
Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """Indexed filters load pages inline (a page costs about what reading one costs, whatever
    the table size). Free text cannot use an index and may scan the whole log, so its pages
    load on a worker thread with its own read-only connection while the window stays live."""

    searching = Signal(bool)
    _page_loaded = Signal(int, object)  # generation, rows (from the worker thread)

    def __init__(self, conn: sqlite3.Connection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._conn = conn
        self._db_path = conn.execute("PRAGMA database_list").fetchone()[2]
        self._rows: list[tuple[Any, ...]] = []
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
        self._seen_id = hq.max_id(self._conn)
        self._ceiling = self._seen_id  # newer rows come through poll(), never through pages
        self._rows = []
        self._exhausted = False
        self._set_loading(False)
        self.endResetModel()
        self.fetchMore(QModelIndex())

    def poll(self) -> int:
        """Prepend rows written since the last look; how many arrived."""
        top = hq.max_id(self._conn)
        if top <= self._seen_id:
            return 0
        fresh = hq.newer(self._conn, self._filter, self._seen_id)
        self._seen_id = top
        if len(fresh) >= hq.NEWER_LIMIT:  # a flood: start over rather than leave a gap
            self.set_filter(self._filter)
            return len(fresh)
        if not fresh:
            return 0
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[0:0] = fresh
        self.endInsertRows()
        return len(fresh)

    def event_id(self, row: int) -> int:
        return int(self._rows[row][0])

    def row_of(self, event_id: int) -> int | None:
        """Row of an event, loading pages until it shows up (None if the filter hides it)."""
        while True:
            for i, r in enumerate(self._rows):
                if r[0] == event_id:
                    return i
            if not self.canFetchMore(QModelIndex()):
                return None
            self.fetchMore(QModelIndex())

    # -- QAbstractTableModel ------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(HEADERS)):
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        row = self._rows[index.row()]
        value = row[_FIELDS[index.column()]]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return clock(value)
            if index.column() == 2 and not value:
                return row[7] or ""  # no tool: show the method
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 3:
            color = _VERDICT_COLORS.get(str(value))
            return QColor(color) if color else None
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 5 and value:
            return str(value)
        return None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._exhausted and not self._loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not self.canFetchMore(parent):
            return
        after = (self._rows[-1][1], self._rows[-1][0]) if self._rows else None
        if not self._filter.text.strip():
            self._append_page(self._generation, hq.page(self._conn, self._filter, after))
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
            rows = hq.page(conn, filt, after)
        finally:
            conn.close()
        self._page_loaded.emit(generation, rows)  # queued to the GUI thread

    def _append_page(self, generation: int, more: list[tuple[Any, ...]]) -> None:
        if generation != self._generation:
            return
        self._set_loading(False)
        self._exhausted = len(more) < hq.PAGE
        more = [r for r in more if r[0] <= self._ceiling]
        if more:
            start = len(self._rows)
            self.beginInsertRows(QModelIndex(), start, start + len(more) - 1)
            self._rows.extend(more)
            self.endInsertRows()

    def _set_loading(self, loading: bool) -> None:
        if loading != self._loading:
            self._loading = loading
            self.searching.emit(loading)
