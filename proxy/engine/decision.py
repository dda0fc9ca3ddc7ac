"""The verdict the engine gives for one tools/call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["allow", "deny", "ask"]
Contract = Literal[
    "allowlist", "pinning", "budget", "constraint", "injection", "sink_gate", "injected_action",
    "default",
]


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    contract: Contract
    reason: str
    destination: str | None = None
    origin: dict[str, Any] | None = None  # {value, server, tool, session_id, ts, provenance}
    detail: dict[str, Any] = field(default_factory=dict)
