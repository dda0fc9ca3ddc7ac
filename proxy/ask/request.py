"""The question a held call asks, and how it was answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from proxy.decision import Decision
from proxy.ipc.protocol import Remember

DecidedBy = Literal["trust", "elicitation", "app", "fallback", "timeout", "cancelled"]


@dataclass(frozen=True)
class AskRequest:
    """A held call and the engine's `ask` decision about it, as the chain sees them."""

    tool: str
    arguments: dict[str, Any]
    decision: Decision
    rpc_id: Any = None
    client_info: dict[str, Any] | None = None

    @property
    def contract(self) -> str:
        return self.decision.contract

    @property
    def reason(self) -> str:
        return self.decision.reason

    @property
    def destination(self) -> str | None:
        """None: nothing a grant can be scoped to (e.g. a changed tool)."""
        return self.decision.destination

    @property
    def origin(self) -> dict[str, Any] | None:
        """Where a tainted or unproven value came from."""
        return self.decision.origin

    @property
    def detail(self) -> dict[str, Any]:
        """e.g. {"diff": ..., "digest": ...} for a changed tool."""
        return self.decision.detail

    @property
    def destinations(self) -> tuple[str, ...]:
        """Every destination this question covers (to and cc may both be unproven): an
        approval is for all of them, never only the first."""
        return self.decision.destinations


@dataclass(frozen=True)
class Outcome:
    allow: bool
    decided_by: DecidedBy
    reason: str
    remember: Remember | None = None  # how long the human said to remember (allow only)
    grant_id: int | None = None  # the trust row used (decided_by='trust') or written (forever)
    # 2026-07-28 era: the `result` to answer the held call with; the call ends there and the
    # client retries with the answers (see AskChain.open_retry).
    input_required: dict[str, Any] | None = None
