"""What the human chose in the popup → the `decision` message each proxy gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proxy.ipc.protocol import Remember


@dataclass(frozen=True)
class Answer:
    allow: bool
    remember: Remember = "once"
    expires_in_s: float | None = None  # only for "forever"
    missed: bool = False  # nobody answered: the countdown ran out (a timeout, not a deny)
    agent_message: str = ""  # a deny's words for the agent, in its `[gatewatch blocked]` text

    @classmethod
    def deny(cls, missed: bool = False, message: str = "") -> Answer:
        return cls(allow=False, missed=missed, agent_message=message.strip())

    @classmethod
    def deny_forever(cls, message: str = "") -> Answer:
        """Always deny this destination for this tool (revocable in Trusted destinations)."""
        return cls(allow=False, remember="forever", agent_message=message.strip())


def decision_message(ask_id: str, answer: Answer) -> dict[str, Any]:
    """A deny is for this call only unless the human chose "always deny" ("forever"); a
    timeout is never remembered and says it was one, so the audit does not blame a human."""
    from proxy.ipc import protocol

    remember = answer.remember
    if not answer.allow and (answer.missed or remember != "forever"):
        remember = "once"
    expires = answer.expires_in_s if remember == "forever" else None
    return protocol.decision(
        ask_id, answer.allow, remember, expires,
        timed_out=answer.missed and not answer.allow,
        agent_message=(answer.agent_message or None) if not answer.allow else None,
    )
