"""The AppLink of one `gatewatch run`: hello from its Session, pause/resume applied to its Gate
(`reload` is handled where settings and policy live: proxy/ask/held.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.ipc import protocol
from proxy.ipc.client import AppLink

if TYPE_CHECKING:
    from proxy.gate import Gate
    from proxy.session import Session


def client_fields(session: Session) -> dict[str, Any]:
    """What the app learns once the MCP client has spoken (hello, then `session` messages)."""
    return {"client": session.client_info, "era": session.era, "can_elicit": session.can_elicit}


def start_app_link(session: Session, gate: Gate) -> AppLink:
    """Connect in the background (and keep retrying); pause/resume act on the gate."""
    hello = protocol.proxy_hello(
        session_id=session.id,
        server=session.server,
        pid=session.pid,
        command=session.command,
        started_at=session.started_at,
        **client_fields(session),
    )

    def on_control(message: dict[str, Any]) -> None:
        action = message.get("action")
        if action in ("pause", "resume"):
            gate.paused = action == "pause"

    def stats() -> dict[str, Any]:
        return {
            "calls": session.calls,
            "denied": session.denied,
            "last_verdict": session.last_verdict,
            "paused": gate.paused,
        }

    link = AppLink(hello, on_control=on_control, stats=stats)
    link.start()
    return link
