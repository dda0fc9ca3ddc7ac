"""Connects the hub's questions to the queue and the popup, and the answers back to proxies."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.countdown import popup_seconds
from app.grants import Answer, decision_message
from app.hub import Hub
from app.popup import ApprovalPopup
from app.questions import Question, QuestionQueue

log = logging.getLogger(__name__)

LaunchedBy = Callable[[str, list[str]], str]  # (server, command) -> app name or ""


class AskController(QObject):
    changed = Signal()  # pending count or missed count changed
    missed_question = Signal(object)  # Question nobody answered in time
    answered_by_human = Signal(object)  # Question the person answered here (no notification)

    def __init__(
        self,
        hub: Hub,
        popup: ApprovalPopup,
        popup_timeout: Callable[[], float],
        parent: QObject | None = None,
        launched_by: LaunchedBy | None = None,
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self.popup = popup
        self.queue = QuestionQueue()
        self.missed = 0
        self._popup_timeout = popup_timeout
        self._launched_by = launched_by
        hub.asked.connect(self.on_ask)
        hub.cancelled.connect(self.on_cancel)
        hub.proxy_left.connect(self.on_proxy_left)
        popup.answered.connect(self.on_answer)

    @property
    def waiting(self) -> int:
        """Questions to answer: what the tray badge and the popup's "1 of N" both count."""
        return len(self.queue)

    def on_ask(self, msg: dict[str, Any]) -> None:
        question = Question.from_message(msg)
        if not question.ask_id:
            log.warning("ignoring an ask without ask_id")
            return
        if self._launched_by is not None:
            proxy = next((p for p in self.hub.proxies()
                          if p.session_id == question.session_id), None)
            command = proxy.command if proxy is not None else []
            question = dataclasses.replace(
                question, launched_by=self._launched_by(question.server, command))
        self.queue.add(question)
        self._refresh()

    def on_cancel(self, session_id: str, ask_id: str, reason: str) -> None:
        question = self.queue.cancel(ask_id, session_id)
        if question is not None and reason == "timeout":
            self._mark_missed(question)
        self._refresh()

    def on_proxy_left(self, session_id: str) -> None:
        if self.queue.drop_session(session_id):
            self._refresh()

    def on_answer(self, answer: Answer) -> None:
        group = self.popup.group
        if group is None:
            return
        for question in self.queue.settle(group):
            self.hub.send(question.session_id, decision_message(question.ask_id, answer))
            if answer.missed:
                self._mark_missed(question)
            else:
                self.answered_by_human.emit(question)
        self._refresh()

    def show_waiting(self) -> bool:
        """Bring the popup forward if a question waits (a tray click); True when one does."""
        if self.queue.current() is None:
            return False
        self.popup.bring_forward()
        return True

    def drop_all(self) -> None:
        """Forget every question without answering (quitting: the proxies see the socket
        close, deny and say the approver went away)."""
        for group in self.queue.groups():
            self.queue.settle(group)
        self.popup.close_quietly()
        self.changed.emit()

    def clear_missed(self) -> None:
        if self.missed:
            self.missed = 0
            self.changed.emit()

    def _mark_missed(self, question: Question) -> None:
        self.missed += 1
        self.missed_question.emit(question)

    def _refresh(self) -> None:
        group = self.queue.current()
        if group is None:
            self.popup.close_quietly()
        else:
            seconds = popup_seconds(self._popup_timeout(), group.seconds_left())
            self.popup.show_group(group, 1, len(self.queue), seconds)
        self.changed.emit()
