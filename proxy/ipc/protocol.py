"""Messages of the local-socket protocol (docs/ipc.md), built and checked in one place."""

from __future__ import annotations

from typing import Any, Literal

PROTOCOL_VERSION = 1
HEARTBEAT_S = 5.0

# How long a human's answer holds: this call, this session, or until revoked (or expired).
Remember = Literal["once", "session", "forever"]


def proxy_hello(
    *,
    session_id: str,
    server: str,
    pid: int,
    command: list[str],
    started_at: float,
    client: dict[str, Any] | None = None,
    era: str | None = None,
    can_elicit: bool | None = None,
) -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "role": "proxy",
        "session_id": session_id,
        "server": server,
        "pid": pid,
        "command": command,
        "started_at": started_at,
        "client": client,
        "era": era,
        "can_elicit": can_elicit,
    }


def server_hello(name: str, version: str) -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "role": "app",
        "name": name,
        "version": version,
    }


def speaks_our_protocol(hello: dict[str, Any]) -> bool:
    """A peer whose major protocol is higher than ours must be left (docs/ipc.md)."""
    version = hello.get("protocol")
    return hello.get("type") == "hello" and isinstance(version, int) and version <= PROTOCOL_VERSION


def ask(
    *,
    ask_id: str,
    session_id: str,
    server: str,
    tool: str,
    destination: str | None,
    arguments_preview: str,
    arguments_digest: str,
    contract: str,
    reason: str,
    origin: dict[str, Any] | None,
    detail: dict[str, Any] | None,
    client: dict[str, Any] | None,
    remember_choices: list[Remember],
    deadline_s: float,
    created_at: float,
) -> dict[str, Any]:
    """A question for the human (docs/ipc.md): `arguments_preview` is redacted and cut short,
    so the app merges identical questions on `arguments_digest` instead."""
    return {
        "type": "ask", "ask_id": ask_id, "session_id": session_id, "server": server,
        "tool": tool, "destination": destination, "arguments_preview": arguments_preview,
        "arguments_digest": arguments_digest, "contract": contract, "reason": reason,
        "origin": origin, "detail": detail, "client": client,
        "remember_choices": remember_choices, "deadline_s": deadline_s,
        "created_at": created_at,
    }


def cancel(ask_id: str, reason: Literal["cancelled", "timeout", "proxy_exit"]) -> dict[str, Any]:
    return {"type": "cancel", "ask_id": ask_id, "reason": reason}


MAX_AGENT_MESSAGE = 500  # characters of "tell the agent why" that reach the agent


def decision(
    ask_id: str,
    allow: bool,
    remember: Remember = "once",
    expires_in_s: float | None = None,
    *,
    timed_out: bool = False,
    agent_message: str | None = None,
) -> dict[str, Any]:
    """`remember` on a deny: "forever" means always deny this destination (docs/ipc.md).
    `timed_out`: nobody answered, the popup's countdown ran out (not a human's deny).
    `agent_message`: the human's words for the agent, put into the deny's result text."""
    return {
        "type": "decision",
        "ask_id": ask_id,
        "allow": allow,
        "remember": remember,
        "expires_in_s": expires_in_s,
        "timed_out": timed_out,
        "agent_message": agent_message[:MAX_AGENT_MESSAGE] if agent_message else None,
    }


def heartbeat(**fields: Any) -> dict[str, Any]:
    return {"type": "heartbeat", **fields}


ControlAction = Literal["pause", "resume", "reload"]


def control(action: ControlAction) -> dict[str, Any]:
    return {"type": "control", "action": action}
