"""Settings tab: edits settings.yaml through app.settings_store; proxies reload on save."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app import settings_store
from app.settings_store import AppSettings

ASK_VIA_LABELS = {
    "auto": "Remembered trust, then the client, then this app, then deny",
    "elicitation": "Only ask inside the AI client (never pop up)",
    "app": "Always ask with a Gatewatch popup",
    "deny": "Never ask: deny what needs a human",
}
ACTION_LABELS = {"deny": "Deny", "ask": "Ask", "allow": "Allow"}


class SettingsTab(QWidget):
    saved = Signal(object)  # AppSettings

    def __init__(self, path: Path, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.ask_via = QComboBox()
        for key, label in ASK_VIA_LABELS.items():
            self.ask_via.addItem(label, key)
        self.popup_timeout = QSpinBox(minimum=0, maximum=600, suffix=" s")
        self.popup_timeout.setSpecialValueText("no countdown")
        self.ask_timeout = QSpinBox(minimum=10, maximum=3600, suffix=" s")
        self.default_action = QComboBox()
        for key, label in ACTION_LABELS.items():
            self.default_action.addItem(label, key)
        self.retention = QSpinBox(minimum=1, maximum=3650, suffix=" days")
        self.detector = QCheckBox("Scan tool results for prompt injection")
        self.start_at_login = QCheckBox("Start Gatewatch when I log in")
        self.save_button = QPushButton("Save")
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)

        form = QFormLayout()
        form.addRow("How to ask", self.ask_via)
        form.addRow("Popup countdown", self.popup_timeout)
        form.addRow("Proxy waits at most", self.ask_timeout)
        form.addRow("Default action", self.default_action)
        form.addRow("Keep history for", self.retention)
        form.addRow("", self.detector)
        form.addRow("", self.start_at_login)
        note = QLabel(f"Stored in {path}")
        note.setTextFormat(Qt.TextFormat.PlainText)
        note.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addStretch(1)
        layout.addLayout(row)
        self.save_button.clicked.connect(self.save)
        self.show_settings(settings)

    def show_settings(self, s: AppSettings) -> None:
        self.ask_via.setCurrentIndex(max(0, self.ask_via.findData(s.ask_via)))
        self.popup_timeout.setValue(s.popup_timeout)
        self.ask_timeout.setValue(s.ask_timeout)
        self.default_action.setCurrentIndex(max(0, self.default_action.findData(s.default_action)))
        self.retention.setValue(s.retention_days)
        self.detector.setChecked(s.detector)
        self.start_at_login.setChecked(s.start_at_login)

    def current(self) -> AppSettings:
        return AppSettings(
            ask_via=str(self.ask_via.currentData()),
            ask_timeout=self.ask_timeout.value(),
            popup_timeout=self.popup_timeout.value(),
            default_action=str(self.default_action.currentData()),
            detector=self.detector.isChecked(),
            retention_days=self.retention.value(),
            start_at_login=self.start_at_login.isChecked(),
        )

    def save(self) -> None:
        settings = self.current()
        settings_store.save(self.path, settings)
        self.status.setText("Saved. Running servers reload their settings.")
        self.saved.emit(settings)
