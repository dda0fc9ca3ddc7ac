"""The tray icon and its menu. State comes from outside (tray_state); this only shows it."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app import icons
from app.tray_state import TrayFacts, TrayState, tray_state, tray_tooltip


class Tray(QObject):
    open_requested = Signal()
    pause_all_requested = Signal(bool)  # True = pause
    quit_requested = Signal()
    protect_requested = Signal()
    message_clicked = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.status = QAction("Gatewatch", self.menu, enabled=False)
        self.unprotected = QAction("", self.menu, enabled=False)
        self.protect_action = QAction("Protect all…", self.menu)
        self.open_action = QAction("Open Gatewatch", self.menu)
        self.pause_action = QAction("Pause all servers", self.menu)
        self.quit_action = QAction("Quit Gatewatch", self.menu)
        for action in (self.status, self.unprotected, self.protect_action, None,
                       self.open_action, self.pause_action, None, self.quit_action):
            if action is None:
                self.menu.addSeparator()
            else:
                self.menu.addAction(action)
        self.open_action.triggered.connect(self.open_requested)
        self.protect_action.triggered.connect(self.protect_requested)
        self.pause_action.triggered.connect(
            lambda: self.pause_all_requested.emit(not self._all_paused)
        )
        self.quit_action.triggered.connect(self.quit_requested)
        self._all_paused: bool = False
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self.message_clicked)
        self.state = TrayState.IDLE
        self._facts: TrayFacts | None = None
        self.update(TrayFacts(0, 0, 0, False))

    def show(self) -> None:
        self.icon.show()

    def update(self, facts: TrayFacts) -> None:
        if facts == self._facts:
            return  # heartbeats arrive every few seconds; redraw only on a change
        self._facts = facts
        self.state = tray_state(facts)
        self._all_paused = facts.all_paused
        self.icon.setIcon(icons.tray_icon(self.state, facts.pending))
        tooltip = tray_tooltip(facts)
        self.icon.setToolTip(tooltip)
        self.status.setText(tray_tooltip(replace(facts, unprotected="")).removeprefix(
            "Gatewatch — "))
        self.unprotected.setText(facts.unprotected)
        self.unprotected.setVisible(bool(facts.unprotected))
        self.protect_action.setVisible(bool(facts.unprotected))
        self.pause_action.setText("Resume all servers" if facts.all_paused else "Pause all servers")

    def notify(self, title: str, text: str, critical: bool = False) -> None:
        icon = QSystemTrayIcon.MessageIcon
        kind = icon.Critical if critical else icon.Warning
        self.icon.showMessage(title, text, kind, 8000)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_requested.emit()
