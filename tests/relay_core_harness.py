"""A relay core with a real engine (optionally the real detector), and readers for its actions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proxy.engine import Engine
from proxy.gate import Gate
from proxy.relay import RelayCore
from proxy.relay.actions import Action, Hold, Record, Timer, ToClient, ToServer
from proxy.session import Session
from proxy.store.database import Database
from proxy.store.schema import connect

ECHO_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "send_email",
        "description": "Send an e-mail.",
        "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}},
    },
]
SEND_POLICY = """
servers:
  core:
    tools:
      send_email:
        exfiltrating: true
        sink_params: [to]
        trusted_destinations: ["*@corp.example"]
"""


def line(msg: Any) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def call(rpc_id: Any, tool: str = "echo", **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}


def tools_result(rpc_id: Any, tools: list[dict[str, Any]], cursor: str | None = None) -> bytes:
    result: dict[str, Any] = {"tools": tools}
    if cursor is not None:
        result["nextCursor"] = cursor
    return line({"jsonrpc": "2.0", "id": rpc_id, "result": result})


def text_result(rpc_id: Any, text: str) -> bytes:
    return line({"jsonrpc": "2.0", "id": rpc_id,
                 "result": {"content": [{"type": "text", "text": text}], "isError": False}})


def upstream(actions: list[Action]) -> list[bytes]:
    return [a.data for a in actions if isinstance(a, ToServer)]


def client(actions: list[Action]) -> list[bytes]:
    return [a.data for a in actions if isinstance(a, ToClient)]


def answers(actions: list[Action]) -> list[Any]:
    """Every message written to the client, batches flattened."""
    out: list[Any] = []
    for data in client(actions):
        msg = json.loads(data)
        out += msg if isinstance(msg, list) else [msg]
    return out


def records(actions: list[Action]) -> list[Any]:
    return [a.event for a in actions if isinstance(a, Record)]


def holds(actions: list[Action]) -> list[Hold]:
    return [a for a in actions if isinstance(a, Hold)]


def timers(actions: list[Action]) -> list[Timer]:
    return [a for a in actions if isinstance(a, Timer)]


def make_engine(db: Path, tmp: Path, session: str = "s1", policy: str = SEND_POLICY) -> Engine:
    path = tmp / f"policy-{session}.yaml"
    path.write_text(policy)
    return Engine.create("core", session, Database(connect(db)), policy_path=path)


def make_core(
    db: Path, tmp: Path, *, listed: bool = True, detector: Any = None, session: str = "s1"
) -> RelayCore:
    """A core whose engine has (or has not yet) seen ECHO_TOOLS listed."""
    engine = make_engine(db, tmp, session)
    core = RelayCore(Session(server="core", command=["x"]), Gate(engine, detector))
    if listed:
        core.gate.tools_listed(ECHO_TOOLS)
        core.listed.update(t["name"] for t in ECHO_TOOLS)
    return core
