"""The main window: History, Clients, Servers, Trusted destinations, Settings.

Above the tabs, while servers run unprotected, one line says how many and offers the button
that opens the wrap preview.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import icons, protection
from app.clients_tab import ClientsTab
from app.history_tab import HistoryTab
from app.hub import Hub
from app.servers_tab import ServersTab
from app.settings_tab import SettingsTab
from app.trust_tab import TrustTab
from proxy.settings import Settings

DEFAULT_SIZE = (1060, 680)


class MainWindow(QMainWindow):
    opened = Signal()  # the human looked: missed questions are acknowledged
    protection_changed = Signal(object)  # protection.Unprotected

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
        self._fit_to_screen()
        self.quit_on_close = False  # True when there is no tray to return to
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.hide()

        self.protect_bar = QFrame()
        self.protect_bar.setObjectName("protectBar")
        self.protect_text = QLabel()
        self.protect_text.setObjectName("protectText")
        self.protect_text.setTextFormat(Qt.TextFormat.PlainText)
        self.protect_button = QPushButton("&Protect all…")
        self.protect_button.setObjectName("protectAll")
        self.protect_button.clicked.connect(self.protect_all)
        bar = QHBoxLayout(self.protect_bar)
        bar.setContentsMargins(10, 6, 6, 6)
        bar.addWidget(self.protect_text, 1)
        bar.addWidget(self.protect_button)
        self.protect_bar.hide()
        self.unprotected = protection.Unprotected(0, ())

        self.tabs = QTabWidget()
        self.history = HistoryTab(conn)
        self.servers = ServersTab(conn, hub)
        self.trust = TrustTab(conn)
        self.settings = SettingsTab(settings_path, settings)
        self.tabs.addTab(self.history, "&History")
        self.clients = ClientsTab()
        self.tabs.addTab(self.clients, "&Clients")
        self.clients.summary_changed.connect(self._show_protection)
        self.tabs.addTab(self.servers, "&Servers")
        self.tabs.addTab(self.trust, "&Trusted destinations")
        self.tabs.addTab(self.settings, "Se&ttings")
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.banner)
        layout.addWidget(self.protect_bar)
        layout.addWidget(self.tabs)
        self.setCentralWidget(central)
        self._show_protection(self.clients.unprotected)

    def _fit_to_screen(self) -> None:
        """The default size, never larger than the screen (150 % scaling on a laptop)."""
        screen = QGuiApplication.primaryScreen()
        width, height = DEFAULT_SIZE
        if screen is not None:
            free = screen.availableGeometry()
            width = min(width, int(free.width() * 0.9))
            height = min(height, int(free.height() * 0.9))
        self.resize(width, height)

    def _show_protection(self, unprotected: protection.Unprotected) -> None:
        self.unprotected = unprotected
        self.protect_text.setText(unprotected.text() + "." if unprotected else "")
        self.protect_bar.setVisible(bool(unprotected))
        self.protection_changed.emit(unprotected)

    def protect_all(self) -> None:
        """The one button: the Clients tab with the preview of protecting every server."""
        self.tabs.setCurrentWidget(self.clients)
        self.bring_forward()
        self.clients.protect_all()

    def show_clients(self) -> None:
        self.tabs.setCurrentWidget(self.clients)
        self.bring_forward()

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

