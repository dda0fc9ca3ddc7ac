"""The approval popup as a user meets it: guard, focus, keyboard, escape/close/timeout,
remember choices, always deny, words for the agent."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from app.grants import Answer, decision_message
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
    assert popup.why.text().startswith("It would send data to a destination you have not")
    assert "sink_gate" not in popup.why.text()  # never the contract's code name
    assert "read_inbox on gmail" in popup.origin.text()
    assert popup.client.text() == "Claude Desktop (claude-ai 0.1.0)"
    assert popup.position.text() == "1 of 3"


def test_why_lists_each_destination_in_words(popup: ApprovalPopup) -> None:
    detail = {"destinations": [{"param": "to[0]", "destination": "a@vendor.example",
                                "verdict": "ask", "why": "is not a vouched destination "
                                "(unproven)"}]}
    show(popup, question(detail=detail, origin=None))
    assert "to[0]: a@vendor.example — not trusted yet" in popup.why.text()
    assert "vouched" not in popup.why.text() and "unproven" not in popup.why.text()


def test_asked_by_names_the_app_whose_config_starts_the_server(popup: ApprovalPopup) -> None:
    q = question(client={"name": "mcp", "version": "0.1.0"})
    show(popup, dataclasses.replace(q, launched_by="Cursor"))
    assert popup.client.text() == "Cursor (the client calls itself “mcp 0.1.0”)"


def test_allow_is_not_the_prominent_button_when_allowing_is_risky(popup: ApprovalPopup) -> None:
    show(popup)  # the destination came from untrusted output
    assert popup.allow_button.property("risky") is True
    show(popup, question("s-2", origin=None))
    assert popup.allow_button.property("risky") is False
    show(popup, question("s-3", destination=None, origin=None, contract="pinning",
                         detail={"pin": "flagged", "rules": ["inj.override"]}))
    assert popup.allow_button.property("risky") is True


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
    assert popup.focusWidget() is popup.deny_button  # Enter there denies: the safe answer
    assert not popup.allow_button.isEnabled()
    qtbot.mouseClick(popup.allow_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(popup, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)  # Alt+A too early
    assert got == []
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    qtbot.mouseClick(popup.allow_button, Qt.MouseButton.LeftButton)
    assert got == [Answer(allow=True)]


def test_escape_means_deny_this_call(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup)
    qtbot.keyClick(popup, Qt.Key.Key_Escape)  # at once: the tail of typing, swallowed
    assert got == []
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
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
    assert popup.deny_button.text() == "&Deny (1 s)"
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    assert got == [Answer.deny(missed=True)]
    # The proxy records it as a timeout, not as the person's deny.
    message = decision_message("s-1", got[0])
    assert message["allow"] is False and message["timed_out"] is True
    assert message["remember"] == "once"


def test_any_interaction_pauses_the_countdown(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup, countdown=1)
    qtbot.mouseClick(popup.details_toggle, Qt.MouseButton.LeftButton)
    assert popup.deny_button.text() == "&Deny (paused)"
    for _ in range(20):  # five seconds of timer ticks, far past the countdown
        popup._on_tick()
    assert got == []
    assert popup.countdown.remaining > 0
    # The client's own deadline still runs, and the popup says so.
    assert popup.deadline_note.text().startswith("The client stops waiting in 11")


def test_countdown_can_be_off(popup: ApprovalPopup) -> None:
    show(popup, countdown=0)
    assert popup.deny_button.text() == "&Deny"
    assert not popup.countdown.running


@pytest.mark.parametrize(
    ("choose", "expected"),
    [
        (lambda p: None, {"remember": "once", "expires_in_s": None}),
        (lambda p: p.remember_session.setChecked(True), {"remember": "session",
                                                         "expires_in_s": None}),
        (lambda p: p.remember_forever.setChecked(True), {"remember": "forever",
                                                         "expires_in_s": None}),
        (lambda p: (p.remember_forever.setChecked(True),
                    p.expiry.setCurrentIndex(p.expiry.findText("for 1 day"))),
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
                                               "allow": True, "timed_out": False,
                                               "agent_message": None, **expected}


def test_remember_resets_for_every_question(popup: ApprovalPopup) -> None:
    show(popup)
    popup.remember_forever.setChecked(True)
    show(popup, question("s-2", destination="other@x.org"))
    assert popup.remember_once.isChecked()
    assert popup.chosen_answer() == Answer(allow=True, remember="once")
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


def test_enter_presses_the_focused_button_and_never_an_unfocused_allow(
    popup: ApprovalPopup, qtbot: QtBot
) -> None:
    got = answers(popup)
    show(popup)
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
    qtbot.keyClick(popup.deny_button, Qt.Key.Key_Return)
    assert got == [Answer.deny()]
    got.clear()
    show(popup, question("s-2"))
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.allow_button.setFocus()
    qtbot.keyClick(popup.allow_button, Qt.Key.Key_Enter)
    assert got == [Answer(allow=True)]


def test_mnemonics_answer_from_the_keyboard(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup)
    for button, letter in ((popup.allow_button, "A"), (popup.deny_button, "D"),
                           (popup.deny_forever_button, "w"), (popup.remember_session, "s")):
        assert f"&{letter}" in button.text(), button.text()
    popup.bring_forward()  # shortcuts work once the person has come to the popup
    qtbot.waitUntil(popup.isActiveWindow)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
    # A mnemonic "clicks" with a short animation, so wait for each one to land.
    qtbot.keyClick(popup, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(popup.remember_session.isChecked)
    qtbot.keyClick(popup, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: bool(got))
    assert got == [Answer(allow=True, remember="session")]
    show(popup, question("s-2"))
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
    qtbot.keyClick(popup, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: len(got) == 2)
    assert got[-1] == Answer.deny()


def test_typing_in_another_window_stays_there(popup: ApprovalPopup, qtbot: QtBot) -> None:
    """A question arrives while the person types in an editor. The popup appears without
    taking the keyboard; where a window manager hands it the focus anyway, the rest of the
    typing burst is swallowed: Space toggles nothing, Enter answers nothing, and the countdown
    keeps running (typing meant for the editor is not reading the popup)."""
    editor = QLineEdit()
    qtbot.addWidget(editor)
    editor.show()
    editor.activateWindow()
    editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor)
    got = answers(popup)
    typed = "please send the report now "
    for i, char in enumerate(typed + "\r"):
        if i == 5:
            show(popup, countdown=60)
        target = QApplication.focusWidget() or editor
        key = Qt.Key.Key_Return if char == "\r" else Qt.Key.Key_Space if char == " " else None
        if key is None:
            qtbot.keyClicks(target, char)
        else:
            qtbot.keyClick(target, key)
        qtbot.wait(40)  # a person typing: well under the guard's quiet time between keys
    assert got == []
    assert not popup.details_toggle.isChecked()
    assert popup.agent_message.text() == ""
    assert popup.countdown.running
    assert editor.text().startswith(typed[:5])


def test_coming_to_the_popup_restarts_the_allow_guard(popup: ApprovalPopup, qtbot: QtBot) -> None:
    editor = QLineEdit()
    qtbot.addWidget(editor)
    show(popup)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    editor.show()
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.bring_forward()  # the person clicks the tray or the popup
    qtbot.waitUntil(popup.isActiveWindow)
    assert not popup.allow_button.isEnabled()
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)


def test_a_minimised_popup_comes_back_for_a_new_question(popup: ApprovalPopup,
                                                         qtbot: QtBot) -> None:
    show(popup)
    popup.showMinimized()
    qtbot.waitUntil(popup.isMinimized)
    show(popup, question("s-2", destination="other@x.org"))
    assert not popup.isMinimized() and popup.isVisible()
    assert popup.headline.text().endswith("other@x.org")


def test_deny_can_tell_the_agent_why(popup: ApprovalPopup, qtbot: QtBot) -> None:
    got = answers(popup)
    show(popup)
    qtbot.waitUntil(popup.keys_accepted, timeout=GUARD_MS * 4)
    qtbot.keyClicks(popup.agent_message, "use the company address instead")
    qtbot.keyClick(popup.agent_message, Qt.Key.Key_Return)  # Enter in the reason denies
    assert got == [Answer.deny(message="use the company address instead")]
    message = decision_message("s-1", got[0])
    assert message["agent_message"] == "use the company address instead"
    assert message["remember"] == "once" and message["timed_out"] is False


def test_always_deny_is_a_standing_deny_for_the_destination(popup: ApprovalPopup) -> None:
    got = answers(popup)
    show(popup)
    popup.deny_forever_button.click()
    message = decision_message("s-1", got[0])
    assert message["allow"] is False and message["remember"] == "forever"
    show(popup, question("s-2", destination=None, contract="pinning",
                         detail={"diff": "-a\n+b"}))
    assert popup.deny_forever_button.isHidden()  # nothing to scope a standing deny to
