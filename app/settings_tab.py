"""Settings tab: edits settings.yaml through proxy.settings; proxies reload on save.

Start at login is not a setting in the file: the autostart entry itself is the truth.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app import app_prefs, autostart
from proxy.settings import DEADLINE_MARGIN_S, Settings, SettingsError, save_settings

ASK_VIA_LABELS = {
    "auto": "Remembered trust, then the AI client, then this app, then deny",
    "elicitation": "Only inside the AI client (never pop up)",
    "app": "Always with a Gatewatch popup",
    "deny": "Never ask: deny what needs a human",
}


class SettingsTab(QWidget):
    saved = Signal(object)  # proxy.settings.Settings

    def __init__(self, path: Path, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self._settings = settings
        self.ask_via = QComboBox()
        for key, label in ASK_VIA_LABELS.items():
            self.ask_via.addItem(label, key)
        self.countdown = QCheckBox("Count down, then deny")
        self.popup_timeout = QDoubleSpinBox(minimum=1, maximum=3600, decimals=0, suffix=" s")
        self.ask_timeout = QDoubleSpinBox(minimum=DEADLINE_MARGIN_S + 5, maximum=3600,
                                          decimals=0, suffix=" s")
        # Shown, not a setting: a question nobody answers is denied (DESIGN: fail closed).
        self.unanswered = QLabel("Deny — Gatewatch fails closed")
        self.retention = QSpinBox(minimum=0, maximum=3650, suffix=" days")
        self.retention.setSpecialValueText("forever")
        self.detector = QCheckBox("Scan tool results for prompt injection")
        self.start_at_login = QCheckBox("Start Gatewatch when I log in")
        self.save_button = QPushButton("Save")
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)

        countdown_row = QHBoxLayout()
        countdown_row.addWidget(self.countdown)
        countdown_row.addWidget(self.popup_timeout)
        countdown_row.addStretch(1)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("How to ask", self.ask_via)
        form.addRow("Popup", countdown_row)
        form.addRow("A call waits at most", self.ask_timeout)
        form.addRow("When nobody answers", self.unanswered)
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
        self.countdown.toggled.connect(self.popup_timeout.setEnabled)
        self.save_button.clicked.connect(self.save)
        self.show_settings(settings, countdown=app_prefs.load().countdown)

    def show_settings(self, s: Settings, countdown: bool) -> None:
        self.ask_via.setCurrentIndex(max(0, self.ask_via.findData(s.ask_via)))
        self.countdown.setChecked(countdown)
        self.popup_timeout.setEnabled(countdown)
        self.popup_timeout.setValue(s.popup_timeout)
        self.ask_timeout.setValue(s.ask_timeout)
        self.retention.setValue(s.retention_days)
        self.detector.setChecked(s.detector)
        self.start_at_login.setChecked(autostart.autostart_file().exists())

    def current(self) -> Settings:
        return dataclasses.replace(
            self._settings,
            ask_via=self.ask_via.currentData(),
            ask_timeout=self.ask_timeout.value(),
            popup_timeout=self.popup_timeout.value(),
            detector=self.detector.isChecked(),
            retention_days=self.retention.value(),
        )

    def save(self) -> None:
        settings = self.current()
        try:
            save_settings(settings, self.path)
        except (OSError, SettingsError) as exc:
            self.status.setText(f"Not saved: {exc}")
            return
        app_prefs.save(app_prefs.AppPrefs(countdown=self.countdown.isChecked()))
        autostart.set_enabled(self.start_at_login.isChecked())
        self._settings = settings
        self.status.setText("Saved. Running servers reload their settings.")
        self.saved.emit(settings)
