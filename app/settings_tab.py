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


def countdown_problem(popup_s: float, ask_s: float, countdown: bool = True) -> str:
    """Why this popup countdown cannot work with this wait ("" when it can). The proxy tells
    the popup to give up DEADLINE_MARGIN_S before its own deadline, so a longer countdown
    would be cut short without a word."""
    longest = ask_s - DEADLINE_MARGIN_S
    if countdown and popup_s > longest:
        return (f"The popup can count down at most {longest:g} s: a call waits at most "
                f"{ask_s:g} s and the popup must answer {DEADLINE_MARGIN_S:g} s before that. "
                "Shorten the countdown or let calls wait longer.")
    return ""


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
        self.problem = QLabel()
        self.problem.setObjectName("error")
        self.problem.setWordWrap(True)
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.hide()
        layout.insertWidget(1, self.problem)
        for box in (self.popup_timeout, self.ask_timeout):
            box.valueChanged.connect(self._check)
        self.countdown.toggled.connect(self._check)
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
        self._check()

    def _check(self) -> bool:
        problem = countdown_problem(self.popup_timeout.value(), self.ask_timeout.value(),
                                    self.countdown.isChecked())
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        self.save_button.setEnabled(not problem)
        return not problem

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
        if not self._check():
            return
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
