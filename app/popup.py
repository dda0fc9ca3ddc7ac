"""The approval popup: one question group at a time, shown by the AskController.

Guards against accidental approval: Allow starts without focus and ignores input for its first
half second; Escape and closing mean deny; a countdown (paused by any interaction) denies when it
runs out. Every text from a proxy is shown as plain text, never as markup.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QHideEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import wording
from app.countdown import Countdown
from app.diff_view import DiffView
from app.grants import Answer, Remember
from app.questions import QuestionGroup

GUARD_MS = 500
TICK_MS = 250
EXPIRY_CHOICES: list[tuple[str, float | None]] = [
    ("no expiry", None),
    ("for 1 hour", 3600.0),
    ("for 1 day", 86400.0),
    ("for 30 days", 30 * 86400.0),
]
_INTERACTIONS = {QEvent.Type.MouseButtonPress, QEvent.Type.KeyPress, QEvent.Type.Wheel}


def _plain(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ApprovalPopup(QDialog):
    answered = Signal(object)  # Answer for the group on show

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalPopup")
        self.setWindowTitle("Gatewatch — approve this call?")
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
        self.setMinimumWidth(520)
        self.group: QuestionGroup | None = None
        self.countdown = Countdown(0, enabled=False)
        self._closing_quietly = False

        self.position = QLabel()
        self.position.setObjectName("position")
        self.headline = _plain("")
        self.headline.setObjectName("headline")
        self.merged = _plain("")
        self.merged.setObjectName("merged")
        self.why = _plain("")
        self.origin = _plain("")
        self.client = _plain("")
        for label in (self.why, self.origin, self.client):
            label.setObjectName("fact")

        self.details_toggle = QToolButton()
        self.details_toggle.setText("Show arguments")
        self.details_toggle.setCheckable(True)
        self.details_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.details_toggle.toggled.connect(self._toggle_details)
        self.preview = DiffView()
        self.preview.setObjectName("preview")
        self.preview.setVisible(False)
        self.preview.setMinimumHeight(140)

        self.remember_once = QRadioButton("Just this call")
        self.remember_session = QRadioButton("For this session")
        self.remember_forever = QRadioButton()
        self.expiry = QComboBox()
        for text, _ in EXPIRY_CHOICES:
            self.expiry.addItem(text)
        self.remember = QButtonGroup(self)
        for button in (self.remember_once, self.remember_session, self.remember_forever):
            self.remember.addButton(button)
        self.remember_forever.toggled.connect(self.expiry.setEnabled)

        self.deny_button = QPushButton("Deny")
        self.deny_button.setObjectName("deny")
        self.allow_button = QPushButton("Allow")
        self.allow_button.setObjectName("allow")
        for push in (self.deny_button, self.allow_button):
            push.setAutoDefault(False)
            push.setDefault(False)
            push.setMinimumWidth(110)
        self.allow_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.deny_button.clicked.connect(lambda: self._answer(Answer.deny()))
        self.allow_button.clicked.connect(self._allow)

        # Without a running countdown the client's own deadline still applies: say when.
        self.deadline_note = QLabel()
        self.deadline_note.setObjectName("caption")

        self._guard = QTimer(self, singleShot=True, interval=GUARD_MS)
        self._guard.timeout.connect(lambda: self.allow_button.setEnabled(True))
        self._tick = QTimer(self, interval=TICK_MS)
        self._tick.timeout.connect(self._on_tick)

        layout = QVBoxLayout(self)
        layout.setSpacing(8)
        top = QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addWidget(self.position, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addWidget(self.merged)
        facts = QFormLayout()
        facts.setHorizontalSpacing(12)
        facts.setVerticalSpacing(6)
        facts.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        facts.addRow(self._caption("Why"), self.why)
        self.origin_caption = self._caption("Came from")
        facts.addRow(self.origin_caption, self.origin)
        facts.addRow(self._caption("Asked by"), self.client)
        layout.addLayout(facts)
        layout.addWidget(self.details_toggle)
        layout.addWidget(self.preview)
        remember_box = QVBoxLayout()
        remember_box.setSpacing(2)
        remember_box.addWidget(QLabel("If you allow, remember it:"))
        remember_box.addWidget(self.remember_once)
        remember_box.addWidget(self.remember_session)
        forever_row = QHBoxLayout()
        forever_row.addWidget(self.remember_forever)
        forever_row.addWidget(self.expiry)
        forever_row.addStretch(1)
        remember_box.addLayout(forever_row)
        layout.addLayout(remember_box)
        buttons = QHBoxLayout()
        buttons.addWidget(self.deadline_note)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_button)
        buttons.addWidget(self.allow_button)
        layout.addLayout(buttons)

    @staticmethod
    def _caption(text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName("caption")
        return label

    # -- showing ------------------------------------------------------------------------------

    def show_group(self, group: QuestionGroup, index: int, total: int, countdown_s: float) -> None:
        """Show a question group; a new group resets every choice and restarts the guard."""
        new = group is not self.group
        self.group = group
        q = group.first
        self.position.setText(f"{index} of {total}" if total > 1 else "")
        self.position.setVisible(total > 1)
        self.headline.setText(wording.headline(q))
        n = len(group.members)
        self.merged.setText(f"{n} identical calls are waiting — one answer settles all." if n > 1
                            else "")
        self.merged.setVisible(n > 1)
        self.why.setText(wording.why(q))
        origin = wording.origin(q)
        self.origin.setText(origin)
        self.origin.setVisible(bool(origin))
        self.origin_caption.setVisible(bool(origin))
        self.client.setText(wording.client(q))
        self.remember_forever.setText(
            f"Always for {q.destination} on {q.tool}" if q.destination else "Always"
        )
        offered = q.remember_choices
        self.remember_session.setVisible("session" in offered)
        self.remember_forever.setVisible("forever" in offered)
        self.expiry.setVisible("forever" in offered)
        if not new:
            return
        diff = (q.detail or {}).get("diff")
        preview = q.arguments_preview + (f"\n\n{diff}" if isinstance(diff, str) and diff else "")
        self.preview.setPlainText(preview)  # plain text: never rendered as markup
        self.details_toggle.setChecked(bool(diff))
        self.remember_once.setChecked(True)
        self.expiry.setCurrentIndex(0)
        self.expiry.setEnabled(False)
        self.countdown = Countdown(countdown_s, enabled=countdown_s > 0)
        self._update_deny_label()
        self.allow_button.setEnabled(False)
        self._guard.start()
        self._tick.start()
        if not self.isVisible():
            self._closing_quietly = False
            self.show()
        self.raise_()
        self.activateWindow()
        # Keys typed for another window land on a harmless control: Space only shows arguments.
        self.details_toggle.setFocus(Qt.FocusReason.OtherFocusReason)

    def close_quietly(self) -> None:
        """Hide without answering (the queue is empty or the question went away)."""
        self._tick.stop()
        self._guard.stop()
        self.group = None
        self._closing_quietly = True
        self.hide()

    # -- answers ------------------------------------------------------------------------------

    def chosen_answer(self) -> Answer:
        if self.remember_forever.isChecked() and self.remember_forever.isVisible():
            expires = EXPIRY_CHOICES[self.expiry.currentIndex()][1]
            return Answer(allow=True, remember=Remember.FOREVER, expires_in_s=expires)
        if self.remember_session.isChecked() and self.remember_session.isVisible():
            return Answer(allow=True, remember=Remember.SESSION)
        return Answer(allow=True)

    def _allow(self) -> None:
        if self.allow_button.isEnabled():
            self._answer(self.chosen_answer())

    def _answer(self, answer: Answer) -> None:
        if self.group is None:
            return
        self._tick.stop()
        self.answered.emit(answer)

    def reject(self) -> None:
        # Escape lands here: deny this call.
        self._answer(Answer.deny())

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing_quietly and self.group is not None:
            event.ignore()  # the controller hides us after the deny is sent
            self._answer(Answer.deny())
            return
        super().closeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter must never answer by accident: only Escape (deny) has a meaning of its own here.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not self.deny_button.hasFocus():
            event.accept()
            return
        super().keyPressEvent(event)

    # -- countdown ----------------------------------------------------------------------------

    def _on_tick(self) -> None:
        if self.countdown.tick(TICK_MS / 1000):
            self._answer(Answer.deny(missed=True))
            return
        self._update_deny_label()

    def _update_deny_label(self) -> None:
        suffix = self.countdown.label()
        self.deny_button.setText(f"Deny ({suffix})" if suffix else "Deny")
        if self.group is None or self.countdown.running:
            self.deadline_note.clear()
            return
        left = math.ceil(self.group.seconds_left())
        self.deadline_note.setText(f"The client stops waiting in {left} s")

    def _toggle_details(self, shown: bool) -> None:
        self.preview.setVisible(shown)
        self.details_toggle.setText("Hide arguments" if shown else "Show arguments")
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.details_toggle.setArrowType(arrow)
        self.adjustSize()

    def showEvent(self, event: QShowEvent) -> None:
        from PySide6.QtWidgets import QApplication

        QApplication.instance().installEventFilter(self)  # type: ignore[union-attr]
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        super().hideEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Any click, key or scroll inside the popup means the human is reading: stop the clock.
        if (
            event.type() in _INTERACTIONS
            and self.countdown.running
            and isinstance(watched, QWidget)
            and (watched is self or self.isAncestorOf(watched))
        ):
            self.countdown.pause()
            self._update_deny_label()
        return False
