"""Wires the parts together: hub, questions, popup, tray, window, notifications, settings."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from app import app_prefs, store
from app.ask_controller import AskController
from app.client_names import LauncherIndex
from app.hub import Hub
from app.live_proxies import LiveProxy
from app.main_window import MainWindow
from app.notifier import Notifier
from app.popup import ApprovalPopup
from app.tray import Tray
from app.tray_state import TrayFacts
from proxy.settings import Settings, SettingsError, load_settings

log = logging.getLogger(__name__)


class GatewatchApp(QObject):
    def __init__(self, conn: sqlite3.Connection, hub: Hub, settings_path: Path,
                 settings: Settings) -> None:
        super().__init__()
        self.conn = conn
        self.hub = hub
        self.settings = settings
        self.prefs = app_prefs.load()
        self.popup = ApprovalPopup()
        self.launchers = LauncherIndex()
        self.asks = AskController(hub, self.popup, self.popup_timeout, self,
                                  launched_by=self.launchers.lookup)
        self.tray = Tray(self)
        self.window = MainWindow(conn, hub, settings_path, settings)
        self.notifier = Notifier(self.tray, conn, self)

        hub.proxies_changed.connect(self.update_tray)
        hub.proxy_joined.connect(self._on_proxy_joined)
        hub.show_requested.connect(self.window.bring_forward)
        hub.noticed.connect(self.notifier.notice)
        self.asks.changed.connect(self.update_tray)
        self.window.opened.connect(self.asks.clear_missed)
        self.window.servers.pause_changed.connect(self.update_tray)
        self.window.trust.changed.connect(self._reload_proxies)
        self.window.settings.saved.connect(self._settings_saved)
        self.notifier.open_event.connect(self.window.open_event)
        self.notifier.open_window.connect(self.window.bring_forward)
        self.asks.missed_question.connect(self.notifier.missed)
        self.asks.answered_by_human.connect(self.notifier.expect_own)
        self.tray.open_requested.connect(self.open_from_tray)
        self.tray.pause_all_requested.connect(self.pause_all)
        self.tray.quit_requested.connect(self.quit)
        self.tray.protect_requested.connect(self.window.protect_all)
        self.window.protection_changed.connect(lambda _: self.update_tray())
        self.window.clients.changed.connect(self.launchers.invalidate)
        self.update_tray()

    def start(self) -> None:
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray.show()
        else:
            self.window.quit_on_close = True
            self.window.say("No system tray was found, so Gatewatch runs in this window. "
                            "Keep it open: closing it stops the approval popups.")
            self.window.bring_forward()
        if self.window.unprotected:
            # First run (and any start while servers run unprotected): say so, with the button.
            self.window.show_clients()

    def all_paused(self) -> bool:
        return store.ALL_SERVERS in store.paused_servers(self.conn)

    def update_tray(self) -> None:
        self.tray.update(TrayFacts(
            proxies=len(self.hub.proxies()),
            pending=self.asks.waiting,
            missed=self.asks.missed,
            all_paused=self.all_paused(),
            unprotected=self.window.unprotected.text() if self.window.unprotected else "",
        ))

    def pause_all(self, pause: bool) -> None:
        store.set_paused(self.conn, store.ALL_SERVERS, pause)
        if not pause:  # resume all clears the per-server switches too
            for server in store.paused_servers(self.conn):
                store.set_paused(self.conn, server, False)
        self.hub.broadcast({"type": "control", "action": "pause" if pause else "resume"})
        self.update_tray()
        self.window.servers.refresh_proxies()

    def _on_proxy_joined(self, proxy: LiveProxy) -> None:
        # A proxy that starts while its server is paused learns it at once.
        if store.is_paused(self.conn, proxy.server):
            self.hub.send(proxy.session_id, {"type": "control", "action": "pause"})

    def _reload_proxies(self) -> None:
        self.hub.broadcast({"type": "control", "action": "reload"})

    def popup_timeout(self) -> float:
        return self.settings.popup_timeout if self.prefs.countdown else 0.0

    def _settings_saved(self, settings: Settings) -> None:
        self.settings = settings
        self.prefs = app_prefs.load()
        self._reload_proxies()

    def open_from_tray(self) -> None:
        """A waiting question comes first; otherwise the window."""
        if not self.asks.show_waiting():
            self.window.bring_forward()

    def quit(self) -> None:
        """Quit for real, even with a question on screen. Qt's quit() asks every window to
        close and gives up when one refuses (the popup refuses: closing it means deny), so
        the questions are dropped first and the loop is ended with exit()."""
        self.asks.drop_all()
        self.hub.close()  # proxies see the socket close and stop waiting for us
        self.tray.icon.hide()
        QApplication.exit(0)


def read_settings(path: Path) -> tuple[Settings, str]:
    """Settings, or the defaults and a message saying what is wrong with the file."""
    try:
        return load_settings(path), ""
    except SettingsError as exc:
        log.error("%s", exc)
        return Settings(), f"{exc}. Using the defaults until it is fixed."
