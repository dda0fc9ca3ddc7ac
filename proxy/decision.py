"""The verdict one tools/call gets: the engine decides it, the gate passes it to the relay,
the relay audits it and holds an `ask` for the ask chain, which shows it to a human.

Kept out of `proxy.engine` so the relay's start path can name it without loading the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["allow", "deny", "ask"]
Contract = Literal[
    # the engine's contracts, in decision order (DESIGN.md)
    "allowlist", "pinning", "budget", "constraint", "injection", "sink_gate", "injected_action",
    "default",
    # the gate and the relay: a broken config, a paused server, a failing engine, a bad frame
    "config", "paused", "internal", "frame",
]


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    contract: Contract
    reason: str
    destination: str | None = None  # the destination the verdict is about (the worst one)
    origin: dict[str, Any] | None = None  # {value, server, tool, session_id, ts, provenance}
    detail: dict[str, Any] = field(default_factory=dict)  # for the audit row
    # Every destination a human must approve for this call (a send to and cc two unproven
    # addresses asks once for both): an approval is for all of them, never only the first.
    asked: tuple[str, ...] = ()

    @property
    def destinations(self) -> tuple[str, ...]:
        """The destinations an `ask` covers: every asked one, and `destination` (first) if the
        engine named it apart from them."""
        found = [d for d in self.asked if d]
        if self.destination and self.destination not in found:
            found.insert(0, self.destination)
        return tuple(dict.fromkeys(found))

    def audit_detail(self) -> dict[str, Any] | None:
        """The audit row's `detail`: the engine's detail with the destination and origin."""
        out = dict(self.detail)
        if self.destination is not None:
            out["destination"] = self.destination
        if self.origin is not None:
            out["origin"] = self.origin
        return out or None
