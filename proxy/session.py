"""What one proxy run knows about itself and its client."""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from proxy.jsonrpc import ERA_2026, ERA_HANDSHAKE, META_CLIENT_CAPS, META_CLIENT_INFO


@dataclass
class Session:
    server: str
    command: list[str]
    id: str = field(default_factory=lambda: secrets.token_hex(8))
    pid: int = field(default_factory=os.getpid)
    started_at: float = field(default_factory=time.time)
    upstream_pid: int | None = None
    client_info: dict[str, Any] | None = None
    protocol_version: str | None = None
    era: str | None = None
    elicitation_modes: set[str] = field(default_factory=set)
    calls: int = 0
    denied: int = 0
    last_verdict: str | None = None

    @property
    def can_elicit(self) -> bool:
        return "form" in self.elicitation_modes

    def saw_initialize(self, params: dict[str, Any]) -> None:
        self.era = ERA_HANDSHAKE
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else None
        version = params.get("protocolVersion")
        self.protocol_version = version if isinstance(version, str) else None
        caps = params.get("capabilities")
        self.elicitation_modes = elicitation_modes(caps if isinstance(caps, dict) else {})

    def saw_request_meta(self, meta: dict[str, Any], version: str) -> bool:
        """A 2026-07-28 era request: capabilities ride in every request's _meta.

        Returns True when something about the client changed.
        """
        before = (self.era, self.protocol_version, self.client_info, self.elicitation_modes)
        self.era = ERA_2026
        self.protocol_version = version
        info = meta.get(META_CLIENT_INFO)
        if isinstance(info, dict):
            self.client_info = info
        caps = meta.get(META_CLIENT_CAPS)
        if isinstance(caps, dict):
            self.elicitation_modes = elicitation_modes(caps)
        return before != (self.era, self.protocol_version, self.client_info, self.elicitation_modes)


def elicitation_modes(capabilities: dict[str, Any]) -> set[str]:
    """2025-06-18: {"elicitation": {}} is form; 2025-11-25 adds explicit form/url modes."""
    elicit = capabilities.get("elicitation")
    if not isinstance(elicit, dict):
        return set()
    modes = {mode for mode in ("form", "url") if mode in elicit}
    return modes or {"form"}
