"""The main window: History, Servers, Trusted destinations, Settings, Clients."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import icons
from app.history_tab import HistoryTab
from app.hub import Hub
from app.servers_tab import ServersTab
from app.settings_tab import SettingsTab
from app.trust_tab import TrustTab
from proxy.settings import Settings

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    opened = Signal()  # the human looked: missed questions are acknowledged

    def __init__(
        self,
        conn: sqlite3.Connection,
        hub: Hub,
        settings_path: Path,
        settings: Settings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Gatewatch")
        self.setWindowIcon(icons.app_icon())
        self.resize(1000, 640)
        self.quit_on_close = False  # True when there is no tray to return to
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.hide()
        self.tabs = QTabWidget()
        self.history = HistoryTab(conn)
        self.servers = ServersTab(conn, hub)
        self.trust = TrustTab(conn)
        self.settings = SettingsTab(settings_path, settings)
        self.tabs.addTab(self.history, "History")
        self.tabs.addTab(self.servers, "Servers")
        self.tabs.addTab(self.trust, "Trusted destinations")
        self.tabs.addTab(self.settings, "Settings")
        clients = _clients_tab()
        if clients is not None:
            self.tabs.addTab(clients, "Clients")
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs)
        self.setCentralWidget(central)

    def say(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.setVisible(bool(text))

    def bring_forward(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()
        self.opened.emit()

    def open_event(self, event_id: int) -> None:
        self.tabs.setCurrentWidget(self.history)
        self.bring_forward()
        self.history.show_event(event_id)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.opened.emit()

    def closeEvent(self, event: QCloseEvent) -> None:
        # With a tray, closing only hides: proxies keep being supervised.
        if self.quit_on_close:
            super().closeEvent(event)
            QApplication.quit()  # no tray to come back from: closing means quitting
            return
        event.ignore()
        self.hide()


def _clients_tab() -> QWidget | None:
    try:
        from app.clients_tab import ClientsTab
    except ImportError as exc:
        log.info("no Clients tab yet (%s)", exc)
        return None
    return ClientsTab()
