"""The ask chain end to end: a real client, `gatewatch run`, a mail upstream, an approver.

The upstream (tests/upstreams/quiet_mail.py, run as server "mail" so the gmail pack gates
send_email) writes every mail it really sends to $MAIL_OUTBOX, so "never forwarded" is checked
where it matters: at the upstream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.relay_pipes import RawProxy, events, query, wait_for
from tests.support import GATEWATCH, Approver, child_env, serve, upstream

pytestmark = pytest.mark.e2e

TO = "new@random.com"
SEND = {"to": [TO], "subject": "Hi", "body": "hello"}
ERA_2026 = "2026-07-28"
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": ERA_2026,
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


@pytest.fixture
def outbox(tmp_path: Path) -> Path:
    return tmp_path / "outbox.jsonl"


def sent(outbox: Path) -> list[dict[str, Any]]:
    if not outbox.exists():
        return []
    return [json.loads(line) for line in outbox.read_text().splitlines()]


def grants(db: Path) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in query(db, "SELECT server, tool, destination, decided_by FROM trust")]


def write_settings(gw_home: Path, text: str) -> None:
    (gw_home / "config").mkdir(exist_ok=True)
    (gw_home / "config" / "settings.yaml").write_text(text)


class Elicitor:
    """An elicitation callback that answers with the given results, in order, and counts."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp import types

        self.asked.append(params)
        answer = self.answers.pop(0)
        return types.ElicitResult(action=answer["action"], content=answer.get("content"))


ALLOW = {"action": "accept", "content": {"allow": True, "remember": "once"}}


def allow(remember: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"allow": True, "remember": remember}}


@asynccontextmanager
async def mail_client(
    db: Path, outbox: Path, *, mode: str = "legacy", elicit: Elicitor | None = None
) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=GATEWATCH[0],
        args=[*GATEWATCH[1:], "run", "--name", "mail", "--db", str(db), "--",
              *upstream("quiet_mail")],
        env=child_env({"MAIL_OUTBOX": str(outbox)}),
    )
    async with Client(params, mode=mode, elicitation_callback=elicit,
                      read_timeout_seconds=60) as client:
        await client.list_tools()
        yield client


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


# -- handshake era: elicitation -----------------------------------------------------------


async def test_legacy_accept_once_reaches_the_upstream_and_stores_nothing(
    db_file: Path, outbox: Path
) -> None:
    elicit = Elicitor(ALLOW, {"action": "decline"})
    async with mail_client(db_file, outbox, elicit=elicit) as client:
        first = await client.call_tool("send_email", SEND)
        assert not first.is_error, text_of(first)
        assert [m["to"] for m in sent(outbox)] == [[TO]]
        schema = elicit.asked[0].requested_schema
        assert schema["required"] == ["allow"]
        second = await client.call_tool("send_email", SEND)  # once: asked again, declined
        assert second.is_error and len(elicit.asked) == 2
    assert len(sent(outbox)) == 1
    assert grants(db_file) == []


@pytest.mark.parametrize(
    "answer",
    [{"action": "decline"}, {"action": "cancel"}, {"action": "accept", "content": {}},
     {"action": "accept", "content": {"allow": False}}],
    ids=["decline", "cancel", "empty-accept", "allow-false"],
)
async def test_legacy_anything_but_allow_is_never_forwarded(
    db_file: Path, outbox: Path, answer: dict[str, Any]
) -> None:
    async with mail_client(db_file, outbox, elicit=Elicitor(answer)) as client:
        result = await client.call_tool("send_email", SEND)
    assert result.is_error and "gatewatch" in text_of(result).lower()
    assert sent(outbox) == []
    deny = [e for e in events(db_file) if e["verdict"] == "deny" and e["tool"] == "send_email"]
    assert deny and deny[-1]["decided_by"] == "elicitation"


async def test_legacy_forever_survives_a_restart(db_file: Path, outbox: Path) -> None:
    async with mail_client(db_file, outbox, elicit=Elicitor(allow("forever"))) as client:
        assert not (await client.call_tool("send_email", SEND)).is_error
    assert grants(db_file) == [("mail", "send_email", TO, "elicitation")]
    elicit = Elicitor()  # any question would fail: there are no answers
    async with mail_client(db_file, outbox, elicit=elicit) as client:
        assert not (await client.call_tool("send_email", SEND)).is_error
    assert elicit.asked == [] and len(sent(outbox)) == 2
    (grant_id,) = [r[0] for r in query(db_file, "SELECT id FROM trust")]
    (decision,) = [e for e in events(db_file) if e["kind"] == "decision"]
    assert decision["decided_by"] == "elicitation"
    assert json.loads(decision["detail"])["grant_id"] == grant_id
    # After the restart the engine itself reads the grant: allowed by the rules, nobody asked.
    calls = [e for e in events(db_file) if e["direction"] == "c2s" and e["tool"] == "send_email"]
    assert [(e["verdict"], e["decided_by"]) for e in calls] == [
        ("ask", "rules"),
        ("allow", "rules"),
    ]


async def test_legacy_session_lasts_until_the_proxy_restarts(db_file: Path, outbox: Path) -> None:
    elicit = Elicitor(allow("session"))
    async with mail_client(db_file, outbox, elicit=elicit) as client:
        assert not (await client.call_tool("send_email", SEND)).is_error
        assert not (await client.call_tool("send_email", SEND)).is_error
    assert len(elicit.asked) == 1 and grants(db_file) == []
    again = Elicitor({"action": "decline"})
    async with mail_client(db_file, outbox, elicit=again) as client:
        assert (await client.call_tool("send_email", SEND)).is_error
    assert len(again.asked) == 1 and len(sent(outbox)) == 2


# -- 2026-07-28 era: input_required and a sealed requestState ------------------------------


async def test_new_era_accept_and_decline(db_file: Path, outbox: Path) -> None:
    elicit = Elicitor(allow("forever"))
    async with mail_client(db_file, outbox, mode=ERA_2026, elicit=elicit) as client:
        result = await client.call_tool("send_email", SEND)
        assert not result.is_error, text_of(result)
    assert len(elicit.asked) == 1 and [m["to"] for m in sent(outbox)] == [[TO]]
    assert grants(db_file) == [("mail", "send_email", TO, "elicitation")]

    other = {**SEND, "to": ["someone@else.org"]}
    async with mail_client(db_file, outbox, mode=ERA_2026,
                           elicit=Elicitor({"action": "decline"})) as client:
        assert (await client.call_tool("send_email", other)).is_error
    assert len(sent(outbox)) == 1


def call(rpc_id: int, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "send_email", "arguments": arguments, "_meta": META_2026, **extra}


async def start_raw(db: Path, outbox: Path) -> RawProxy:
    command = [*upstream("quiet_mail")]
    proc = await asyncio.create_subprocess_exec(
        *GATEWATCH, "run", "--name", "mail", "--db", str(db), "--", *command,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=child_env({"MAIL_OUTBOX": str(outbox)}),
        limit=1 << 26,
    )
    return RawProxy(proc)


async def test_new_era_forged_replayed_and_swapped_states_are_denied(
    db_file: Path, outbox: Path
) -> None:
    proxy = await start_raw(db_file, outbox)
    try:
        assert "tools" in (await proxy.request(0, "tools/list", {"_meta": META_2026}))["result"]
        first = (await proxy.request(1, "tools/call", call(1, SEND)))["result"]
        assert first["resultType"] == "input_required"
        assert TO in first["inputRequests"][next(iter(first["inputRequests"]))]["params"]["message"]
        state = first["requestState"]
        (key,) = first["inputRequests"]
        yes = {key: {"action": "accept", "content": {"allow": True}}}

        forged = state[:-6] + ("A" * 6 if not state.endswith("A" * 6) else "B" * 6)
        answer = await proxy.request(2, "tools/call",
                                     call(2, SEND, inputResponses=yes, requestState=forged))
        assert answer["result"]["isError"] and answer["result"]["resultType"] == "complete"

        evil = {**SEND, "to": ["attacker@evil.example"]}
        second = (await proxy.request(3, "tools/call", call(3, SEND)))["result"]
        swapped = await proxy.request(4, "tools/call", call(
            4, evil, inputResponses=yes, requestState=second["requestState"]))
        assert swapped["result"]["isError"]

        third = (await proxy.request(5, "tools/call", call(5, SEND)))["result"]
        retry = call(6, SEND, inputResponses=yes, requestState=third["requestState"])
        ok = await proxy.request(6, "tools/call", retry)
        assert not ok["result"].get("isError"), ok
        replay = await proxy.request(7, "tools/call", {**retry})
        assert replay["result"]["isError"]
    finally:
        await proxy.kill()
    assert [m["to"] for m in sent(outbox)] == [[TO]]  # only the genuine, fresh retry went through


# -- no elicitation: the app over the socket, or nobody ------------------------------------


async def test_approver_allows(db_file: Path, outbox: Path, approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "allow", "--remember", "forever")
    async with mail_client(db_file, outbox) as client:
        result = await client.call_tool("send_email", SEND)
    assert not result.is_error, text_of(result)
    assert grants(db_file) == [("mail", "send_email", TO, "app")]


async def test_approver_denies(db_file: Path, outbox: Path, approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "deny")
    async with mail_client(db_file, outbox) as client:
        assert (await client.call_tool("send_email", SEND)).is_error
    assert sent(outbox) == []
    assert any(e["decided_by"] == "app" and e["verdict"] == "deny" for e in events(db_file))


async def test_no_approver_at_all_is_fallback_deny(db_file: Path, outbox: Path) -> None:
    async with mail_client(db_file, outbox) as client:
        assert (await client.call_tool("send_email", SEND)).is_error
    assert sent(outbox) == []
    assert any(e["decided_by"] == "fallback" and e["verdict"] == "deny" for e in events(db_file))


@pytest.mark.slow
async def test_unanswered_question_times_out(
    db_file: Path, outbox: Path, gw_home: Path, approvers: list[Approver]
) -> None:
    write_settings(gw_home, "ask_timeout: 10\n")
    approver = serve(approvers, "--auto", "ignore")
    async with mail_client(db_file, outbox) as client:
        assert (await client.call_tool("send_email", SEND)).is_error
    approver.wait_for("withdrawn")
    assert sent(outbox) == []
    assert any(e["decided_by"] == "timeout" for e in events(db_file))


async def test_approver_killed_mid_question_denies(
    db_file: Path, outbox: Path, approvers: list[Approver]
) -> None:
    approver = serve(approvers, "--auto", "ignore")
    async with mail_client(db_file, outbox) as client:
        pending = asyncio.create_task(client.call_tool("send_email", SEND))
        await asyncio.to_thread(approver.wait_for, "ask ")
        approver.proc.kill()
        assert (await asyncio.wait_for(pending, 30)).is_error
    assert sent(outbox) == []


async def test_two_proxies_asking_at_once(
    db_file: Path, tmp_path: Path, approvers: list[Approver]
) -> None:
    approver = serve(approvers, "--auto", "allow", "--delay", "0.5")
    boxes = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    async with mail_client(db_file, boxes[0]) as one, mail_client(db_file, boxes[1]) as two:
        results = await asyncio.gather(one.call_tool("send_email", SEND),
                                       two.call_tool("send_email", SEND))
    assert [r.is_error for r in results] == [False, False]
    assert [len(sent(b)) for b in boxes] == [1, 1]
    assert len(approver.wait_for("decided ", count=2)) == 2


async def test_cancelled_call_is_never_forwarded(
    db_file: Path, outbox: Path, approvers: list[Approver]
) -> None:
    approver = serve(approvers, "--auto", "ignore")
    proxy = await start_raw(db_file, outbox)
    try:
        await proxy.request(0, "initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}})
        await proxy.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await proxy.request(1, "tools/list", {})
        await proxy.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "send_email", "arguments": SEND}})
        await asyncio.to_thread(approver.wait_for, "ask ")
        await proxy.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": 2, "reason": "user stopped it"}})
        await asyncio.to_thread(approver.wait_for, "withdrawn")
        assert (await proxy.request(3, "ping", {}))["id"] == 3  # the proxy goes on
        proxy.close_stdin()
        await proxy.wait()
    finally:
        await proxy.kill()
    assert sent(outbox) == []
    assert any(e["decided_by"] == "cancelled" for e in events(db_file))



async def test_new_era_retry_the_rules_now_allow_reaches_the_upstream_clean(
    db_file: Path, outbox: Path
) -> None:
    proxy = await start_raw(db_file, outbox)
    try:
        await proxy.request(0, "tools/list", {"_meta": META_2026})
        first = (await proxy.request(1, "tools/call", call(1, SEND)))["result"]
        second = (await proxy.request(2, "tools/call", call(2, SEND)))["result"]
        (key,) = first["inputRequests"]
        forever = {key: {"action": "accept", "content": {"allow": True, "remember": "forever"}}}
        done = await proxy.request(3, "tools/call", call(
            3, SEND, inputResponses=forever, requestState=first["requestState"]))
        assert not done["result"].get("isError"), done
        # The grant now makes the rules allow; the second retry still carries our state.
        late = await proxy.request(4, "tools/call", call(
            4, SEND, inputResponses=forever, requestState=second["requestState"]))
        assert not late["result"].get("isError"), late
        assert late["result"]["content"][0]["text"] == "queued"
    finally:
        await proxy.kill()
    assert len(sent(outbox)) == 2


@pytest.mark.slow
async def test_app_controls_pause_resume_and_reload(
    db_file: Path, outbox: Path, gw_home: Path
) -> None:
    from proxy.ipc.server import SocketServer

    beats: list[dict[str, Any]] = []
    asked: list[dict[str, Any]] = []

    async def decide(message: dict[str, Any]) -> dict[str, Any]:
        asked.append(message)
        return {"allow": True, "remember": "once", "expires_in_s": None}

    def on_event(kind: str, message: dict[str, Any]) -> None:
        if kind in ("hello", "heartbeat"):
            beats.append(message)

    async def paused_is(value: bool) -> None:
        start = len(beats)
        await wait_for(lambda: any(b.get("paused") is value for b in beats[start:]),
                       timeout=30, what=f"a heartbeat with paused={value}")

    server = SocketServer(decide, on_event=on_event)
    await server.start()
    try:
        async with mail_client(db_file, outbox) as client:
            await wait_for(lambda: beats, what="the proxy's hello")
            server.control("pause")
            await paused_is(True)
            paused = await client.call_tool("send_email", SEND)
            assert paused.is_error and "paused" in text_of(paused) and asked == []

            server.control("resume")
            await paused_is(False)
            assert not (await client.call_tool("send_email", SEND)).is_error
            assert len(asked) == 1 and asked[0]["destination"] == TO

            write_settings(gw_home, "ask_via: deny\n")
            server.control("reload")
            server.control("pause")  # controls are handled in order: paused means reloaded
            await paused_is(True)
            server.control("resume")
            await paused_is(False)
            other = {**SEND, "to": ["other@random.com"]}
            assert (await client.call_tool("send_email", other)).is_error
            assert len(asked) == 1  # ask_via: deny asks nobody
    finally:
        await server.close()
    assert len(sent(outbox)) == 1
