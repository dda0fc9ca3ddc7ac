"""What a running proxy tells the app, and what it learns from the app's switches in the DB."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from proxy.store.schema import connect
from tests.relay_pipes import wait_for
from tests.support import GATEWATCH, child_env, upstream

PLANTED = "attacker@evil.example"  # only ever appears in the poisoned mail's body


@asynccontextmanager
async def mail(db: Path, tmp_path: Path) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=GATEWATCH[0],
        args=[*GATEWATCH[1:], "run", "--name", "mail", "--db", str(db), "--",
              *upstream("mail_server")],
        env=child_env({"MAIL_OUTBOX": str(tmp_path / "outbox.jsonl")}),
    )
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        await client.list_tools()
        yield client


async def test_a_denied_call_reaches_the_app_as_a_notice(db_file: Path, tmp_path: Path) -> None:
    from proxy.ipc.server import SocketServer

    notices: list[dict[str, Any]] = []

    async def decide(message: dict[str, Any]) -> dict[str, Any]:
        return {"allow": False, "remember": "once", "expires_in_s": None}

    def on_event(kind: str, message: dict[str, Any]) -> None:
        if kind == "notice":
            notices.append(message)

    server = SocketServer(decide, on_event=on_event)
    await server.start()
    try:
        async with mail(db_file, tmp_path) as client:
            await client.call_tool("read_inbox", {})
            denied = await client.call_tool(
                "send_email", {"to": [PLANTED], "subject": "x", "body": "y"}
            )
            assert denied.is_error
            # The poisoned inbox itself may be withheld first (its own notice): wait for the send.
            await wait_for(lambda: [n for n in notices if n["tool"] == "send_email"],
                           what="a notice for the denied send")
    finally:
        await server.close()
    notice = next(n for n in notices if n["tool"] == "send_email")
    assert notice["server"] == "mail" and notice["tool"] == "send_email"
    assert notice["verdict"] == "deny" and PLANTED in notice["reason"]
    assert not (tmp_path / "outbox.jsonl").exists()


async def test_pause_all_set_while_the_app_was_closed_holds_at_start(
    db_file: Path, tmp_path: Path
) -> None:
    conn = connect(db_file)
    conn.execute("INSERT INTO server_state (server, paused, updated_at) VALUES ('*', 1, ?)",
                 (time.time(),))
    conn.close()
    async with mail(db_file, tmp_path) as client:
        result = await client.call_tool("read_inbox", {})
    assert result.is_error
    assert "paused" in " ".join(getattr(c, "text", "") for c in result.content)
