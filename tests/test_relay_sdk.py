"""Real MCP servers through `gatewatch run`, driven by the mcp SDK's own client.

What a user notices: the client sees exactly what it saw without Gatewatch (same tools,
resources, prompts, large results, progress), in both protocol eras, and the audit log tells
what happened.
"""

from __future__ import annotations

import asyncio
import json
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.relay_pipes import events, query
from tests.support import GATEWATCH, child_env, npm_server, upstream

pytestmark = pytest.mark.e2e
INFO = {"name": "gatewatch-tests", "version": "0"}


def proxied(name: str, command: list[str], db: Path) -> list[str]:
    return [*GATEWATCH, "run", "--name", name, "--db", str(db), "--", *command]


@asynccontextmanager
async def client(command: list[str], mode: str = "legacy") -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=child_env())
    async with Client(params, mode=mode) as c:
        yield c


async def listings(c: Client) -> dict[str, Any]:
    """What a client learns about a server, in comparable form."""
    out: dict[str, Any] = {
        "server": c.server_info.model_dump() if c.server_info else None,
        "protocol": c.protocol_version,
        "capabilities": c.server_capabilities.model_dump(),
    }
    for key, call in (
        ("tools", c.list_tools),
        ("resources", c.list_resources),
        ("prompts", c.list_prompts),
    ):
        try:
            out[key] = (await call()).model_dump()
        except MCPError as exc:  # e.g. a server without prompts: the same error either way
            out[key] = {"error": exc.error.code, "message": exc.error.message}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["filesystem", "everything"])
async def test_npm_server_lists_the_same_through_the_proxy(
    name: str, db_file: Path, tmp_path: Path
) -> None:
    command = [npm_server(name)] + ([str(tmp_path)] if name == "filesystem" else [])
    async with client(command) as c:
        direct = await listings(c)
    async with client(proxied(name, command, db_file)) as c:
        through = await listings(c)
    assert through == direct
    assert direct["tools"]["tools"]  # not vacuously equal
    methods = {r["method"] for r in events(db_file) if r["direction"] == "c2s"}
    assert {"initialize", "tools/list", "resources/list", "prompts/list"} <= methods


async def raw_tools(command: list[str]) -> list[dict[str, Any]]:
    """The server's tools/list exactly as it sends it (initialize, initialized, tools/list)."""
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=PIPE, stdout=PIPE, env=child_env(), limit=1 << 24
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": INFO}
    for msg in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
    try:
        while True:
            msg = json.loads(await asyncio.wait_for(proc.stdout.readline(), 20))
            if msg.get("id") == 2:
                return list(msg["result"]["tools"])
    finally:
        proc.kill()
        await proc.wait()


def approve_tools(db: Path, server: str, tools: list[dict[str, Any]]) -> None:
    """A human approved these tools before (pinned), so no call waits for one."""
    from proxy.engine.pinning import PinStore, ToolVersion
    from proxy.store.database import Database

    database = Database.open(db)
    try:
        store = PinStore(database.pins, server)
        for tool in tools:
            store.approve(ToolVersion.of(tool))
    finally:
        database.close()


@pytest.mark.slow
async def test_everything_server_large_echo_progress_and_audit(db_file: Path) -> None:
    message = "0123456789abcdef" * (3 * 1024 * 1024 // 16)  # 3 MB
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    # server-everything announces tools/list_changed at start, so its tools are not trusted on
    # first use: they count as approved earlier, by a human, as a user's would be.
    approve_tools(db_file, "everything", await raw_tools([npm_server("everything")]))
    async with client(proxied("everything", [npm_server("everything")], db_file)) as c:
        await c.list_tools()  # as every client does first
        echoed = await c.call_tool("echo", {"message": message})
        assert echoed.content[0].text == f"Echo: {message}"  # type: ignore[union-attr]
        long = await c.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress_callback=on_progress,
        )
        assert not long.is_error
    assert seen == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

    rows = events(db_file)
    calls = [r for r in rows if r["method"] == "tools/call"]
    by_dir = {(r["direction"], r["tool"]): r for r in calls}
    echo_in, echo_out = by_dir[("c2s", "echo")], by_dir[("s2c", "echo")]
    assert echo_in["kind"] == "request" and echo_in["size"] > 3 * 1024 * 1024
    assert echo_out["kind"] == "response" and echo_out["size"] > 3 * 1024 * 1024
    assert echo_out["rpc_id"] == echo_in["rpc_id"] and echo_out["latency_ms"] > 0
    assert echo_in["payload_truncated"] == 1  # the log keeps a bounded payload, not 3 MB
    op = by_dir[("s2c", "trigger-long-running-operation")]
    assert op["latency_ms"] >= 250  # the upstream took its 0.3 s; the log shows it
    notes = [r for r in rows if r["method"] == "notifications/progress"]
    assert len(notes) == 3 and all(n["direction"] == "s2c" for n in notes)
    (session,) = query(db_file, "SELECT * FROM sessions")
    assert session["server"] == "everything" and session["era"] == "handshake"
    assert session["client_name"] and session["exit_code"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "era", "version"),
    [("legacy", "handshake", "2025-11-25"), ("auto", "2026-07-28", "2026-07-28")],
)
async def test_sdk_upstream_in_both_protocol_eras(
    mode: str, era: str, version: str, db_file: Path
) -> None:
    command = upstream("sdk_dual_server")
    async with client(command, mode) as c:
        direct = await listings(c)
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with client(proxied("dual", command, db_file), mode) as c:
        through = await listings(c)
        assert c.protocol_version == version
        added = await c.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"result": 42}
        counted = await c.call_tool("count_up", {"steps": 3}, progress_callback=on_progress)
        assert counted.content[0].text == "counted 3"  # type: ignore[union-attr]
    assert through == direct
    assert seen == [1.0, 2.0, 3.0]

    (session,) = query(db_file, "SELECT * FROM sessions")
    assert (session["era"], session["protocol_version"]) == (era, version)
    assert session["client_name"] == "mcp"
    rows = events(db_file)
    assert ("initialize" in {r["method"] for r in rows}) == (mode == "legacy")
    answered = {r["tool"] for r in rows if r["direction"] == "s2c" and r["method"] == "tools/call"}
    assert answered == {"add", "count_up"}
