"""The approval popup: one question group at a time, shown by the AskController.

Guards against accidental answers: the popup appears without taking the keyboard (typing meant
for another window stays there), Allow ignores input for half a second after the popup appears
or becomes active, Enter presses only the focused button, Escape and closing mean deny, and a
countdown (paused by any interaction inside the popup) runs out to a timeout, not a human deny.
Every text from a proxy is shown as plain text, never as markup.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QHideEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QButtonGroup,
    QComboBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import wording
from app.countdown import Countdown
from app.diff_view import DiffView
from app.grants import Answer
from app.questions import QuestionGroup
from proxy.ipc.protocol import Remember

GUARD_MS = 500
TICK_MS = 250
EXPIRY_CHOICES: list[tuple[str, float | None]] = [
    ("until I revoke it", None),
    ("for 1 hour", 3600.0),
    ("for 1 day", 86400.0),
    ("for 30 days", 30 * 86400.0),
]
_INTERACTIONS = {QEvent.Type.MouseButtonPress, QEvent.Type.KeyPress, QEvent.Type.Wheel,
                 QEvent.Type.ShortcutOverride}


def _plain(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    # Wrapped labels must get the height their text needs at the width they are given.
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


class ApprovalPopup(QDialog):
    answered = Signal(object)  # Answer for the group on show

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalPopup")
        self.setWindowTitle("Gatewatch — approve this call?")
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
        # Appear without taking the keyboard from the window the person is typing in.
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setMinimumWidth(560)
        self.setMaximumWidth(760)  # long destinations wrap instead of widening the popup
        self.group: QuestionGroup | None = None
        self.countdown = Countdown(0, enabled=False)
        self._closing_quietly = False
        self._quiet = QElapsedTimer()  # since the popup appeared or the last swallowed key

        self.position = QLabel()
        self.position.setObjectName("position")
        self.headline = _plain()
        self.headline.setObjectName("headline")
        self.merged = _plain()
        self.merged.setObjectName("merged")
        self.why = _plain()
        self.origin = _plain()
        self.client = _plain()
        for label in (self.why, self.origin, self.client):
            label.setObjectName("fact")

        self.details_toggle = QToolButton()
        self.details_toggle.setText("Show ar&guments")
        self.details_toggle.setCheckable(True)
        self.details_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.details_toggle.toggled.connect(self._toggle_details)
        self.preview = DiffView()
        self.preview.setObjectName("preview")
        self.preview.setVisible(False)
        self.preview.setMinimumHeight(140)

        self.remember_once = QRadioButton("&Just this call")
        self.remember_session = QRadioButton("For this &session")
        self.remember_forever = QRadioButton("T&rust this destination")
        self.expiry = QComboBox()
        for text, seconds in EXPIRY_CHOICES:
            self.expiry.addItem(text, seconds)  # the item's data is what an answer carries
        self.remember = QButtonGroup(self)
        self._scopes: dict[QAbstractButton, Remember] = {
            self.remember_once: "once",
            self.remember_session: "session",
            self.remember_forever: "forever",
        }
        for button in self._scopes:
            self.remember.addButton(button)
        self.remember_forever.toggled.connect(self.expiry.setEnabled)

        self.agent_caption = QLabel("If you deny, &tell the agent why:")
        self.agent_message = QLineEdit()
        self.agent_message.setObjectName("agentMessage")
        self.agent_message.setPlaceholderText("optional, e.g. “use the company address”")
        self.agent_message.setMaxLength(500)
        self.agent_caption.setBuddy(self.agent_message)

        self.deny_button = QPushButton("&Deny")
        self.deny_button.setObjectName("deny")
        self.deny_forever_button = QPushButton("Al&ways deny")
        self.deny_forever_button.setObjectName("denyForever")
        self.deny_forever_button.setToolTip(
            "Deny this call and never ask again about this destination for this tool "
            "(undo it in Trusted destinations)")
        self.allow_button = QPushButton("&Allow")
        self.allow_button.setObjectName("allow")
        for push in (self.deny_button, self.deny_forever_button, self.allow_button):
            push.setAutoDefault(False)
            push.setDefault(False)
            push.setMinimumWidth(110)
        self.allow_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.deny_button.clicked.connect(
            lambda: self._answer(Answer.deny(message=self.agent_message.text())))
        self.deny_forever_button.clicked.connect(
            lambda: self._answer(Answer.deny_forever(self.agent_message.text())))
        self.allow_button.clicked.connect(self._allow)

        # Without a running countdown the client's own deadline still applies: say when.
        self.deadline_note = QLabel()
        self.deadline_note.setObjectName("note")

        self._guard = QTimer(self, singleShot=True, interval=GUARD_MS)
        self._guard.timeout.connect(lambda: self.allow_button.setEnabled(True))
        self._tick = QTimer(self, interval=TICK_MS)
        self._tick.timeout.connect(self._on_tick)

        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)  # see _fit()
        top = QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addWidget(self.position, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addWidget(self.merged)
        facts = QGridLayout()
        facts.setHorizontalSpacing(12)
        facts.setVerticalSpacing(6)
        facts.setColumnStretch(1, 1)
        self.origin_caption = self._caption("Came from")
        for row, (caption, label) in enumerate(((self._caption("Why"), self.why),
                                                (self.origin_caption, self.origin),
                                                (self._caption("Asked by"), self.client))):
            facts.addWidget(caption, row, 0, Qt.AlignmentFlag.AlignRight
                            | Qt.AlignmentFlag.AlignTop)
            facts.addWidget(label, row, 1)
        layout.addLayout(facts)
        layout.addWidget(self.details_toggle)
        layout.addWidget(self.preview, 1)
        remember_box = QVBoxLayout()
        remember_box.setSpacing(4)
        self.remember_caption = QLabel("If you allow, remember it:")
        remember_box.addWidget(self.remember_caption)
        remember_box.addWidget(self.remember_once)
        remember_box.addWidget(self.remember_session)
        forever_row = QHBoxLayout()
        forever_row.addWidget(self.remember_forever)
        forever_row.addWidget(self.expiry)
        forever_row.addStretch(1)
        remember_box.addLayout(forever_row)
        layout.addLayout(remember_box)
        message_row = QHBoxLayout()
        message_row.addWidget(self.agent_caption)
        message_row.addWidget(self.agent_message, 1)
        layout.addLayout(message_row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.deadline_note)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_forever_button)
        buttons.addWidget(self.deny_button)
        buttons.addSpacing(12)
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
        self.merged.setText(wording.merged(n))
        self.merged.setVisible(n > 1)
        self.why.setText(wording.why(q))
        origin = wording.origin(q)
        self.origin.setText(origin)
        self.origin.setVisible(bool(origin))
        self.origin_caption.setVisible(bool(origin))
        self.client.setText(wording.client(q))
        offered = q.remember_choices
        for button, scope in self._scopes.items():
            if scope != "once":
                button.setVisible(scope in offered)
        self.expiry.setVisible("forever" in offered)
        self.deny_forever_button.setVisible(bool(q.destination))
        risky = wording.risky(q)
        if self.allow_button.property("risky") != risky:
            # Allow is the prominent button only when allowing is the ordinary answer.
            self.allow_button.setProperty("risky", risky)
            self.allow_button.style().unpolish(self.allow_button)
            self.allow_button.style().polish(self.allow_button)
        if not new:
            return
        diff = (q.detail or {}).get("diff")
        preview = q.arguments_preview + (f"\n\n{diff}" if isinstance(diff, str) and diff else "")
        self.preview.setPlainText(preview)  # plain text: never rendered as markup
        self.details_toggle.setChecked(bool(diff))
        self.remember_once.setChecked(True)
        self.expiry.setCurrentIndex(0)
        self.expiry.setEnabled(False)
        self.agent_message.clear()
        self.countdown = Countdown(countdown_s, enabled=countdown_s > 0)
        self._update_deny_label()
        self._start_guard()
        self._quiet.start()
        self._tick.start()
        self._closing_quietly = False
        if self.isMinimized() or not self.isVisible():
            self.showNormal()  # a minimised popup comes back for a new question
        self.raise_()
        # Safe keyboard focus for when the person comes to the popup: Enter there denies.
        self.deny_button.setFocus(Qt.FocusReason.OtherFocusReason)
        self._fit()
        QTimer.singleShot(0, self._fit)  # again once the window manager has placed it

    def bring_forward(self) -> None:
        """The person asked for the popup (tray click): show it and give it the keyboard."""
        if self.group is None:
            return
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def close_quietly(self) -> None:
        """Hide without answering (the queue is empty or the question went away)."""
        self._tick.stop()
        self._guard.stop()
        self.group = None
        self._closing_quietly = True
        self.hide()

    # -- answers ------------------------------------------------------------------------------

    def chosen_answer(self) -> Answer:
        button = self.remember.checkedButton()
        scope: Remember = "once"
        if button is not None and not button.isHidden():
            scope = self._scopes.get(button, "once")
        if scope == "forever":
            expires = self.expiry.currentData()
            return Answer(allow=True, remember=scope,
                          expires_in_s=float(expires) if expires is not None else None)
        return Answer(allow=True, remember=scope)

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
        self._answer(Answer.deny(message=self.agent_message.text()))

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing_quietly and self.group is not None:
            event.ignore()  # the controller hides us after the deny is sent
            self._answer(Answer.deny())
            return
        super().closeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter presses the focused button (Deny by default), never an unfocused Allow.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            focused = self.focusWidget()
            if isinstance(focused, QAbstractButton) and focused.isEnabled() and \
                    focused in (self.deny_button, self.deny_forever_button, self.allow_button):
                focused.click()
            elif focused is self.agent_message:
                self.deny_button.click()  # a typed reason is for a deny
            return
        super().keyPressEvent(event)

    # -- countdown and guard ------------------------------------------------------------------

    def _start_guard(self) -> None:
        self.allow_button.setEnabled(False)
        self._guard.start()

    def _on_tick(self) -> None:
        if self.countdown.tick(TICK_MS / 1000):
            self._answer(Answer.deny(missed=True))
            return
        self._update_deny_label()

    def _update_deny_label(self) -> None:
        suffix = self.countdown.label()
        self.deny_button.setText(f"&Deny ({suffix})" if suffix else "&Deny")
        if self.group is None or self.countdown.running:
            self.deadline_note.clear()
            return
        left = math.ceil(self.group.seconds_left())
        self.deadline_note.setText(f"The client stops waiting in {left} s")

    def _toggle_details(self, shown: bool) -> None:
        self.preview.setVisible(shown)
        self.details_toggle.setText("Hide ar&guments" if shown else "Show ar&guments")
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.details_toggle.setArrowType(arrow)
        self._fit()

    def _fit(self) -> None:
        """Exactly as tall as the wrapped text needs at the current width: no gaps, no cut
        lines (wrapped labels only know their height once the width is known)."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        width = max(self.width(), self.minimumWidth())
        height = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() else \
            layout.sizeHint().height()
        # The layout's own minimum is reckoned at the narrowest width, far too tall for text
        # that wraps; the real minimum is the height at this width (so nothing overlaps).
        self.setMinimumHeight(height)
        self.resize(width, height)

    def showEvent(self, event: QShowEvent) -> None:
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        super().hideEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.WindowActivate and self.group is not None:
            # A click that brings the popup to the front must not also land on Allow.
            self._start_guard()
        return super().event(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        inside = isinstance(watched, QWidget) and (watched is self or self.isAncestorOf(watched))
        if not inside or event.type() not in _INTERACTIONS:
            return False
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) and \
                not self.keys_accepted():
            # Keys typed for another window that landed here: the burst is swallowed whole
            # (no Space toggling, no Enter answering, no pausing the clock).
            self._quiet.start()
            return True
        # Any click, key or scroll inside the popup means the human is reading: stop the clock.
        if self.countdown.running:
            self.countdown.pause()
            self._update_deny_label()
        return False

    def keys_accepted(self) -> bool:
        """False for the guard time after the popup appeared and after each swallowed key:
        a key then is most likely the tail of typing meant for another window."""
        return not self._quiet.isValid() or self._quiet.elapsed() >= GUARD_MS
