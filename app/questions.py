"""The approval queue: questions from every proxy, identical ones merged, one answer for all.

Identical means the same server, tool, destination, contract and arguments (by the digest the
proxy sends: the preview is redacted and cut short, so two different calls can look alike).
A question without a digest merges with nothing.

No Qt here. The popup shows `current()`; the hub feeds `add()`, `cancel()` and `drop_session()`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from proxy.decision import DestinationCheck, destination_checks

Key = tuple[str, str, str | None, str, str]


@dataclass(frozen=True)
class Question:
    """One `ask` message from one proxy (docs/ipc.md)."""

    ask_id: str
    session_id: str
    server: str
    tool: str
    destination: str | None
    arguments_preview: str
    contract: str
    reason: str
    origin: dict[str, Any] | None
    client: dict[str, Any] | None
    deadline_s: float
    created_at: float
    detail: dict[str, Any] | None
    received_at: float  # our monotonic clock, for the deadline
    remember_choices: tuple[str, ...] = ("once", "session", "forever")
    arguments_digest: str = ""
    launched_by: str = ""  # the app whose config started this server, when known
    checked: tuple[DestinationCheck, ...] = ()  # the sink gate's finding per destination

    @classmethod
    def from_message(cls, msg: dict[str, Any], now: float | None = None) -> Question:
        def text(name: str) -> str:
            value = msg.get(name)
            return value if isinstance(value, str) else ""

        def obj(name: str) -> dict[str, Any] | None:
            value = msg.get(name)
            return value if isinstance(value, dict) else None

        destination = msg.get("destination")
        offered = msg.get("remember_choices")
        default = ("once", "session", "forever") if isinstance(destination, str) else (
            "once", "session")
        choices = tuple(c for c in offered if isinstance(c, str)) if isinstance(offered, list) \
            else default
        if not isinstance(destination, str) and msg.get("contract") != "pinning":
            # A grant needs a destination; a tool approval is stored as a pin by the proxy.
            choices = tuple(c for c in choices if c != "forever")
        deadline = msg.get("deadline_s")
        created = msg.get("created_at")
        return cls(
            ask_id=text("ask_id"),
            session_id=text("session_id"),
            server=text("server"),
            tool=text("tool"),
            destination=destination if isinstance(destination, str) else None,
            arguments_preview=text("arguments_preview"),
            contract=text("contract"),
            reason=text("reason"),
            origin=obj("origin"),
            client=obj("client"),
            deadline_s=float(deadline) if isinstance(deadline, (int, float)) else 0.0,
            created_at=float(created) if isinstance(created, (int, float)) else time.time(),
            detail=obj("detail"),
            received_at=time.monotonic() if now is None else now,
            remember_choices=choices or ("once",),
            arguments_digest=text("arguments_digest"),
            checked=destination_checks((obj("detail") or {}).get("destinations")),
        )

    @property
    def key(self) -> Key:
        # The contract is part of the key so a changed-tool question (no destination) never
        # merges with a different kind of question about the same tool.
        same_call = f"args:{self.arguments_digest}" if self.arguments_digest else \
            f"ask:{self.session_id}/{self.ask_id}"
        return (self.server, self.tool, self.destination, self.contract, same_call)

    def deadline_at(self) -> float:
        return self.received_at + self.deadline_s


@dataclass
class QuestionGroup:
    """Identical questions: one answer settles every member."""

    key: Key
    members: list[Question] = field(default_factory=list)

    @property
    def first(self) -> Question:
        return self.members[0]

    def seconds_left(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return max(0.0, min(q.deadline_at() for q in self.members) - now)


class QuestionQueue:
    """FIFO of question groups. `on_change` fires after every change of content."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._groups: list[QuestionGroup] = []
        self._on_change = on_change

    def __len__(self) -> int:
        return len(self._groups)

    def pending_calls(self) -> int:
        return sum(len(g.members) for g in self._groups)

    def current(self) -> QuestionGroup | None:
        return self._groups[0] if self._groups else None

    def groups(self) -> list[QuestionGroup]:
        return list(self._groups)

    def add(self, question: Question) -> QuestionGroup:
        for group in self._groups:
            if group.key == question.key:
                if all((m.session_id, m.ask_id) != (question.session_id, question.ask_id)
                       for m in group.members):
                    group.members.append(question)
                    self._changed()
                return group
        group = QuestionGroup(question.key, [question])
        self._groups.append(group)
        self._changed()
        return group

    def settle(self, group: QuestionGroup) -> list[Question]:
        """Remove a group that was answered; return the questions the answer goes to."""
        if group not in self._groups:
            return []
        self._groups.remove(group)
        self._changed()
        return list(group.members)

    def cancel(self, ask_id: str, session_id: str | None = None) -> Question | None:
        """A question became void (cancelled, timed out, proxy gone); with `session_id`, only
        that proxy's (ask ids are the proxy's own, so two proxies' may be equal)."""
        return self._remove(lambda q: q.ask_id == ask_id
                            and (session_id is None or q.session_id == session_id))

    def drop_session(self, session_id: str) -> list[Question]:
        """A proxy's connection closed: every question it asked is void."""
        dropped: list[Question] = []
        while (q := self._remove(lambda q: q.session_id == session_id, notify=False)) is not None:
            dropped.append(q)
        if dropped:
            self._changed()
        return dropped

    def _remove(self, match: Callable[[Question], bool], notify: bool = True) -> Question | None:
        for group in self._groups:
            for q in group.members:
                if match(q):
                    group.members.remove(q)
                    if not group.members:
                        self._groups.remove(group)
                    if notify:
                        self._changed()
                    return q
        return None

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
