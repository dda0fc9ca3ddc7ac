"""The proxies connected right now, as told by their hello / session / heartbeat messages."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any


@dataclass
class LiveProxy:
    session_id: str
    server: str
    pid: int | None
    command: list[str]
    started_at: float
    client: dict[str, Any] | None = None
    era: str | None = None
    can_elicit: bool | None = None
    calls: int = 0
    denied: int = 0
    last_verdict: str | None = None
    paused: bool = False

    @property
    def client_label(self) -> str:
        if not self.client:
            return "—"
        name = str(self.client.get("name") or "?")
        version = self.client.get("version")
        return f"{name} {version}" if version else name

    @classmethod
    def from_hello(cls, msg: dict[str, Any]) -> LiveProxy:
        command = msg.get("command")
        pid = msg.get("pid")
        started = msg.get("started_at")
        proxy = cls(
            session_id=str(msg.get("session_id") or ""),
            server=str(msg.get("server") or "?"),
            pid=pid if isinstance(pid, int) else None,
            command=[str(c) for c in command] if isinstance(command, list) else [],
            started_at=float(started) if isinstance(started, (int, float)) else time.time(),
        )
        proxy.update(msg)
        return proxy

    def update(self, msg: dict[str, Any]) -> None:
        """Apply the fields a `session` or `heartbeat` message carries; ignore the rest."""
        if isinstance(msg.get("client"), dict):
            self.client = msg["client"]
        if isinstance(msg.get("era"), str):
            self.era = msg["era"]
        if isinstance(msg.get("can_elicit"), bool):
            self.can_elicit = msg["can_elicit"]
        for name in ("calls", "denied"):
            if isinstance(msg.get(name), int):
                setattr(self, name, msg[name])
        if isinstance(msg.get("last_verdict"), str):
            self.last_verdict = msg["last_verdict"]
        if isinstance(msg.get("paused"), bool):
            self.paused = msg["paused"]


def uptime_text(started_at: float, now: float | None = None) -> str:
    seconds = int(max(0.0, (time.time() if now is None else now) - started_at))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} d {seconds % 86400 // 3600} h"
