"""The approval popup as a user meets it: guard, focus, escape/close/timeout, remember choices."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.grants import Answer, Remember, decision_message
from app.popup import GUARD_MS, ApprovalPopup
from app.questions import Question, QuestionQueue


def question(ask_id: str = "s-1", destination: str | None = "new@random.com",
             **extra: Any) -> Question:
    msg = {"type": "ask", "ask_id": ask_id, "session_id": "s", "server": "gmail",
           "tool": "send_email", "destination": destination,
           "arguments_preview": '{"to": "new@random.com", "body": "<b>hi</b> & <script>"}',
           "contract": "sink_gate", "reason": "destination to='new@random.com' is not trusted",
           "origin": {"value": "new@random.com", "server": "gmail", "tool": "read_inbox",
                      "ts": 0.0, "provenance": "free_text"},
           "client": {"name": "claude-ai", "version": "0.1.0"}, "deadline_s": 115, **extra}
    return Question.from_message(msg)


@pytest.fixture
def popup(qtbot: QtBot) -> ApprovalPopup:
    widget = ApprovalPopup()
    qtbot.addWidget(widget)
    return widget


def show(popup: ApprovalPopup, q: Question | None = None, countdown: float = 60,
         total: int = 1) -> QuestionQueue:
    queue = QuestionQueue()
    group = queue.add(q or question())
    popup.show_group(group, 1, total, countdown)
    return queue


def answers(popup: ApprovalPopup) -> list[Answer]:
    got: list[Answer] = []
    popup.answered.connect(got.append)
    return got


def test_says_what_why_where_from_and_who(popup: ApprovalPopup) -> None:
    show(popup, total=3)
    assert popup.headline.text() == "send_email on gmail wants to send to new@random.com"
    assert "not trusted" in popup.why.text() and "sink_gate" in popup.why.text()
    assert "read_inbox on gmail" in popup.origin.text()
    assert popup.client.text() == "claude-ai 0.1.0"
    assert popup.position.text() == "1 of 3"


def test_arguments_are_shown_escaped_never_as_markup(popup: ApprovalPopup) -> None:
    show(popup)
    assert not popup.preview.isVisible()
    popup.details_toggle.click()
    assert popup.preview.isVisible()
    assert "<b>hi</b> & <script>" in popup.preview.toPlainText()
    for label in (popup.headline, popup.why, popup.origin, popup.client):
        assert label.textFormat() == Qt.TextFormat.PlainText


def test_allow_has_no_focus_and_ignores_input_at_first(popup: ApprovalPopup,
                                                       qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup)
    assert popup.focusWidget() is popup.details_toggle
    assert not popup.allow_button.isEnabled()
    qtbot.mouseClick(popup.allow_button, Qt.MouseButton.LeftButton)
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space, Qt.Key.Key_A):
        qtbot.keyClick(popup.focusWidget() or popup, key)  # typing meant for another window
    assert got == []
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    qtbot.mouseClick(popup.allow_button, Qt.MouseButton.LeftButton)
    assert got == [Answer(allow=True)]


def test_escape_means_deny_this_call(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup)
    qtbot.keyClick(popup, Qt.Key.Key_Escape)
    assert got == [Answer.deny()]


def test_closing_the_window_means_deny(popup: ApprovalPopup) -> None:
    got = answers(popup)
    show(popup)
    popup.close()
    assert got == [Answer.deny()]


def test_countdown_runs_out_to_a_missed_deny(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup, countdown=1)
    assert popup.deny_button.text() == "Deny (1 s)"
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    assert got == [Answer.deny(missed=True)]


def test_any_interaction_pauses_the_countdown(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup, countdown=1)
    qtbot.mouseClick(popup.details_toggle, Qt.MouseButton.LeftButton)
    assert popup.deny_button.text() == "Deny (paused)"
    for _ in range(20):  # five seconds of timer ticks, far past the countdown
        popup._on_tick()
    assert got == []
    assert popup.countdown.remaining > 0
    # The client's own deadline still runs, and the popup says so.
    assert popup.deadline_note.text().startswith("The client stops waiting in 11")


def test_countdown_can_be_off(popup: ApprovalPopup) -> None:
    show(popup, countdown=0)
    assert popup.deny_button.text() == "Deny"
    assert not popup.countdown.running


@pytest.mark.parametrize(
    ("choose", "expected"),
    [
        (lambda p: None, {"remember": "once", "expires_in_s": None}),
        (lambda p: p.remember_session.setChecked(True), {"remember": "session",
                                                         "expires_in_s": None}),
        (lambda p: p.remember_forever.setChecked(True), {"remember": "forever",
                                                         "expires_in_s": None}),
        (lambda p: (p.remember_forever.setChecked(True), p.expiry.setCurrentIndex(2)),
         {"remember": "forever", "expires_in_s": 86400.0}),
    ],
)
def test_remember_choice_becomes_the_right_decision(
    popup: ApprovalPopup, qtbot: QtBot, choose: Any, expected: dict[str, Any]
) -> None:
    got = answers(popup)
    show(popup)
    choose(popup)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.allow_button.click()
    assert decision_message("s-1", got[0]) == {"type": "decision", "ask_id": "s-1",
                                               "allow": True, **expected}


def test_remember_resets_for_every_question(popup: ApprovalPopup) -> None:
    show(popup)
    popup.remember_forever.setChecked(True)
    show(popup, question("s-2", destination="other@x.org"))
    assert popup.remember_once.isChecked()
    assert popup.chosen_answer() == Answer(allow=True, remember=Remember.ONCE)
    assert not popup.allow_button.isEnabled()  # the guard restarts too


def test_no_always_choice_without_a_destination(popup: ApprovalPopup) -> None:
    show(popup, question(destination=None, contract="pinning",
                         detail={"diff": "-old description\n+new description"}))
    assert popup.headline.text() == "send_email on gmail changed since you approved it"
    assert not popup.remember_forever.isVisible()
    assert "+new description" in popup.preview.toPlainText()
    assert popup.preview.isVisible()


def test_only_offered_remember_choices_show(popup: ApprovalPopup) -> None:
    show(popup, question(remember_choices=["once"]))
    assert not popup.remember_session.isVisible() and not popup.remember_forever.isVisible()
    assert popup.remember_once.isVisible()
