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
class DestinationCheck:
    """One destination a call names, and what the sink gate found for it."""

    param: str  # where in the arguments: "to[0]", "headers.Bcc"
    destination: str  # canonical, as trust and taint compare it
    verdict: Verdict
    why: str

    def as_json(self) -> dict[str, str]:
        return {"param": self.param, "destination": self.destination, "verdict": self.verdict,
                "why": self.why}


def destination_checks(listed: Any) -> tuple[DestinationCheck, ...]:
    """The checks back from their JSON form (`detail["destinations"]` of an ask message or an
    audit row); an entry that is not well formed is left out."""
    if not isinstance(listed, list):
        return ()
    return tuple(
        DestinationCheck(str(entry.get("param") or ""), entry["destination"], entry["verdict"],
                         str(entry.get("why") or ""))
        for entry in listed
        if isinstance(entry, dict) and isinstance(entry.get("destination"), str)
        and entry["destination"] and entry.get("verdict") in ("allow", "deny", "ask")
    )


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    contract: Contract
    reason: str
    destination: str | None = None  # the destination the verdict is about (the worst one)
    origin: dict[str, Any] | None = None  # {value, server, tool, session_id, ts, provenance}
    detail: dict[str, Any] = field(default_factory=dict)  # for the audit row
    checked: tuple[DestinationCheck, ...] = ()  # the sink gate's finding for each destination

    @property
    def destinations(self) -> tuple[str, ...]:
        """The destinations an `ask` covers: every one the sink gate asks about, and
        `destination` (first) if the engine named it apart from them. A send to and cc two
        unproven addresses asks once for both: an approval is for all, never only the first."""
        found = [c.destination for c in self.checked if c.verdict == "ask"]
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
