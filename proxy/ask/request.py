"""The question a held call asks, and how it was answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from proxy.ipc.protocol import Remember

DecidedBy = Literal["trust", "elicitation", "app", "fallback", "timeout", "cancelled"]


@dataclass(frozen=True)
class AskRequest:
    tool: str
    arguments: dict[str, Any]
    destination: str | None  # None: nothing a grant can be scoped to (e.g. a changed tool)
    contract: str
    reason: str
    origin: dict[str, Any] | None = None  # where a tainted or unproven value came from
    detail: dict[str, Any] = field(default_factory=dict)  # e.g. {"diff": ...} for a changed tool
    rpc_id: Any = None
    client_info: dict[str, Any] | None = None

    @property
    def destinations(self) -> tuple[str, ...]:
        """Every destination this question covers: a call may name several unproven ones
        (to and cc), and the engine lists each under detail["destinations"] with its verdict.
        An approval is for all of them, never only the first."""
        listed = self.detail.get("destinations")
        found = [
            entry["destination"]
            for entry in (listed if isinstance(listed, list) else [])
            if isinstance(entry, dict)
            and entry.get("verdict") == "ask"
            and isinstance(entry.get("destination"), str)
            and entry["destination"]
        ]
        if self.destination and self.destination not in found:
            found.insert(0, self.destination)
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Outcome:
    allow: bool
    decided_by: DecidedBy
    reason: str
    remember: Remember | None = None  # how long the human said to remember (allow only)
    grant_id: int | None = None  # the trust row used (decided_by='trust') or written (forever)
    # 2026-07-28 era: the `result` to answer the held call with; the call ends there and the
    # client retries with the answers (see AskChain.resume).
    input_required: dict[str, Any] | None = None
