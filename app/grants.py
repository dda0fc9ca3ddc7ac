"""What the human chose in the popup → the `decision` message each proxy gets."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any


class Remember(enum.Enum):
    ONCE = "once"
    SESSION = "session"
    FOREVER = "forever"


if TYPE_CHECKING:
    from proxy.ipc.protocol import Remember as Scope

_SCOPES: dict[Remember, Scope] = {
    Remember.ONCE: "once",
    Remember.SESSION: "session",
    Remember.FOREVER: "forever",
}


@dataclass(frozen=True)
class Answer:
    allow: bool
    remember: Remember = Remember.ONCE
    expires_in_s: float | None = None  # only for FOREVER
    missed: bool = False  # nobody answered: the countdown ran out

    @classmethod
    def deny(cls, missed: bool = False) -> Answer:
        return cls(allow=False, missed=missed)


def decision_message(ask_id: str, answer: Answer) -> dict[str, Any]:
    """A deny is always for this call only: remembering is a grant, never a standing refusal
    that a later, deliberate Allow could not override."""
    from proxy.ipc import protocol

    remember = answer.remember if answer.allow else Remember.ONCE
    expires = answer.expires_in_s if remember is Remember.FOREVER else None
    return protocol.decision(ask_id, answer.allow, _SCOPES[remember], expires)
