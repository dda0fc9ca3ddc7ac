"""The chain's order and memory, with a fake client channel, a real database and a real socket."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from proxy.ask import AskChain, AskChannelError, AskRequest, without_retry_fields
from proxy.ask.chain import INPUT_KEY
from proxy.ask.channel import Era
from proxy.ask.request import Outcome
from proxy.decision import Decision, DestinationCheck
from proxy.ipc import protocol
from proxy.ipc.client import AppLink
from proxy.ipc.server import SocketServer
from proxy.settings import Settings
from proxy.store.database import Database
from proxy.store.schema import connect

ARGS = {"to": "new@random.com", "subject": "Hi", "body": "hello"}
REQ = AskRequest(
    tool="send_email",
    arguments=ARGS,
    decision=Decision("ask", "sink_gate",
                      "destination to='new@random.com' is not a trusted recipient",
                      destination="new@random.com"),
    rpc_id=7,
)
ALLOW_FOREVER = {"action": "accept", "content": {"allow": True, "remember": "forever"}}


class FakeChannel:
    """The relay's side as the chain sees it; answers elicitation with what the test says."""

    def __init__(
        self,
        answer: Any = None,
        *,
        era: Era = "handshake",
        modes: tuple[str, ...] = ("form",),
        error: Exception | None = None,
        hang: bool = False,
    ) -> None:
        self.era: Era = era
        self.elicitation_modes = set(modes)
        self.client_info: dict[str, Any] | None = {"name": "test-client", "version": "1"}
        self.cancelled = asyncio.Event()
        self.answer, self.error, self.hang = answer, error, hang
        self.requests: list[tuple[str, dict[str, Any], float]] = []
        self.asked = asyncio.Event()

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.requests.append((method, params, timeout))
        self.asked.set()
        if self.error is not None:
            raise self.error
        if self.hang:
            await asyncio.Event().wait()
        return self.answer


@pytest.fixture
def db(db_file: Path) -> Any:
    conn = connect(db_file)
    yield conn
    conn.close()


def chain(db: Any, settings: Settings | None = None, **kwargs: Any) -> AskChain:
    # Queued statements (the ask steps) are dropped unless a test collects them.
    write = kwargs.pop("write", lambda sql, params: None)
    return AskChain.create("gmail", "sess1", Database(db, write), settings or Settings(),
                           app_link=kwargs.pop("app_link", None))


def trust_rows(db: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in db.execute(
        "SELECT server, tool, destination, decided_by, expires_at IS NOT NULL FROM trust")]


Decide = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


@pytest.fixture
async def app() -> AsyncIterator[Callable[[Decide], Awaitable[tuple[AppLink, list[Any]]]]]:
    """A real socket server (the app's stand-in) and the proxy's AppLink connected to it."""
    opened: list[Any] = []

    async def start(decide: Decide) -> tuple[AppLink, list[Any]]:
        seen: list[Any] = []
        server = SocketServer(decide, on_event=lambda kind, m: seen.append((kind, m)))
        await server.start()
        hello = protocol.proxy_hello(session_id="sess1", server="gmail", pid=os.getpid(),
                                     command=["mail"], started_at=0.0)
        link = AppLink(hello, reconnect_s=0.05)
        link.start()
        opened.extend([link, server])
        assert await link.wait_connected(20)
        return link, seen

    yield start
    for thing in opened:
        await thing.close()


def answer(allow: bool, remember: str = "once", expires: float | None = None) -> Decide:
    async def decide(message: dict[str, Any]) -> dict[str, Any]:
        return {"allow": allow, "remember": remember, "expires_in_s": expires}

    return decide


# -- handshake-era elicitation ------------------------------------------------------------


async def test_elicitation_allow_forever_is_stored_and_then_trusted(db: Any) -> None:
    c = chain(db)
    channel = FakeChannel(ALLOW_FOREVER)
    outcome = await c.resolve(REQ, channel)
    assert (outcome.allow, outcome.decided_by, outcome.remember) == (True, "elicitation", "forever")
    method, params, timeout = channel.requests[0]
    assert method == "elicitation/create" and params["requestedSchema"]["required"] == ["allow"]
    assert 119 < timeout <= 120
    assert trust_rows(db) == [("gmail", "send_email", "new@random.com", "elicitation", 0)]

    again = await chain(db).resolve(REQ, FakeChannel(ALLOW_FOREVER))  # a new proxy run
    assert (again.allow, again.decided_by, again.grant_id) == (True, "trust", outcome.grant_id)


async def test_session_is_remembered_in_memory_only(db: Any) -> None:
    c = chain(db)
    first = await c.resolve(REQ, FakeChannel({"action": "accept",
                                              "content": {"allow": True, "remember": "session"}}))
    assert (first.allow, first.remember) == (True, "session")
    quiet = FakeChannel(hang=True)
    second = await c.resolve(REQ, quiet)
    assert (second.allow, second.decided_by) == (True, "trust") and not quiet.requests
    assert trust_rows(db) == []
    other = await chain(db).resolve(REQ, FakeChannel({"action": "decline"}))  # restarted proxy
    assert not other.allow


async def test_once_stores_nothing(db: Any) -> None:
    c = chain(db)
    once = {"action": "accept", "content": {"allow": True, "remember": "once"}}
    assert (await c.resolve(REQ, FakeChannel(once))).allow
    channel = FakeChannel({"action": "decline"})
    assert not (await c.resolve(REQ, channel)).allow and channel.requests  # asked again
    assert trust_rows(db) == []


@pytest.mark.parametrize(
    "result", [{"action": "decline"}, {"action": "cancel"}, {"action": "accept"},
               {"action": "accept", "content": {}}]
)
async def test_anything_but_an_explicit_allow_denies(db: Any, result: dict[str, Any]) -> None:
    outcome = await chain(db).resolve(REQ, FakeChannel(result))
    assert (outcome.allow, outcome.decided_by) == (False, "elicitation")
    assert trust_rows(db) == []


async def test_elicitation_timeout_denies(db: Any) -> None:
    outcome = await chain(db, Settings(ask_timeout=0.2)).resolve(REQ, FakeChannel(hang=True))
    assert (outcome.allow, outcome.decided_by) == (False, "timeout")


async def test_cancelled_call_cancels_the_elicitation(db: Any) -> None:
    channel = FakeChannel(hang=True)
    pending = asyncio.create_task(chain(db).resolve(REQ, channel))
    await asyncio.wait_for(channel.asked.wait(), 20)
    channel.cancelled.set()
    outcome = await asyncio.wait_for(pending, 20)
    assert (outcome.allow, outcome.decided_by) == (False, "cancelled")


# -- order ---------------------------------------------------------------------------------


async def test_no_elicitation_and_no_app_is_fallback_deny(db: Any) -> None:
    outcome = await chain(db).resolve(REQ, FakeChannel(modes=()))
    assert (outcome.allow, outcome.decided_by) == (False, "fallback")


async def test_client_error_falls_through_to_the_app_and_is_audited(db: Any, app: Any) -> None:
    link, seen = await app(answer(True, "session"))
    writes: list[tuple[str, tuple[Any, ...]]] = []
    c = chain(db, write=lambda sql, params: writes.append((sql, params)), app_link=link)
    channel = FakeChannel(error=AskChannelError("Method not found"))
    outcome = await c.resolve(REQ, channel)
    assert (outcome.allow, outcome.decided_by, outcome.remember) == (True, "app", "session")
    assert len(writes) == 1
    sql, params = writes[0]
    db.execute(sql, params)  # the statement is valid against the real schema
    row = db.execute("SELECT kind, tool, decided_by, reason FROM events").fetchone()
    assert tuple(row)[:3] == ("ask_step", "send_email", "elicitation")
    assert "Method not found" in row["reason"]
    asked = next(m for kind, m in seen if kind == "ask")
    assert asked["deadline_s"] == 115 and asked["destination"] == "new@random.com"
    assert asked["client"] == {"name": "test-client", "version": "1"}


async def test_auto_prefers_elicitation_over_the_app(db: Any, app: Any) -> None:
    link, seen = await app(answer(False))
    outcome = await chain(db, app_link=link).resolve(REQ, FakeChannel(ALLOW_FOREVER))
    assert outcome.decided_by == "elicitation" and not any(k == "ask" for k, _ in seen)


async def test_ask_via_app_skips_elicitation(db: Any, app: Any) -> None:
    link, _ = await app(answer(True, "forever", expires=3600))
    channel = FakeChannel(ALLOW_FOREVER)
    outcome = await chain(db, Settings(ask_via="app"), app_link=link).resolve(REQ, channel)
    assert (outcome.allow, outcome.decided_by, outcome.remember) == (True, "app", "forever")
    assert not channel.requests
    assert trust_rows(db) == [("gmail", "send_email", "new@random.com", "app", 1)]


async def test_ask_via_elicitation_never_uses_the_app(db: Any, app: Any) -> None:
    link, seen = await app(answer(True))
    settings = Settings(ask_via="elicitation")
    outcome = await chain(db, settings, app_link=link).resolve(REQ, FakeChannel(modes=()))
    assert (outcome.allow, outcome.decided_by) == (False, "fallback")
    assert not any(k == "ask" for k, _ in seen)


async def test_ask_via_deny_asks_nobody_but_honours_grants(db: Any) -> None:
    channel = FakeChannel(ALLOW_FOREVER)
    denied = await chain(db, Settings(ask_via="deny")).resolve(REQ, channel)
    assert (denied.allow, denied.decided_by) == (False, "fallback") and not channel.requests
    db.execute("INSERT INTO trust (server, tool, destination, created_at) "
               "VALUES ('gmail', 'send_email', 'new@random.com', 0)")
    assert (await chain(db, Settings(ask_via="deny")).resolve(REQ, channel)).decided_by == "trust"


async def test_app_deny_and_cancel(db: Any, app: Any) -> None:
    link, _ = await app(answer(False))
    outcome = await chain(db, app_link=link).resolve(REQ, FakeChannel(modes=()))
    assert (outcome.allow, outcome.decided_by) == (False, "app")


async def test_cancelled_call_withdraws_the_app_question(db: Any, app: Any) -> None:
    asked = asyncio.Event()

    async def never(message: dict[str, Any]) -> None:
        asked.set()
        await asyncio.Event().wait()

    link, seen = await app(never)
    channel = FakeChannel(modes=())
    pending = asyncio.create_task(chain(db, app_link=link).resolve(REQ, channel))
    await asyncio.wait_for(asked.wait(), 20)
    channel.cancelled.set()
    assert (await asyncio.wait_for(pending, 20)).decided_by == "cancelled"
    while not any(kind == "cancel" for kind, _ in seen):
        await asyncio.sleep(0.01)
    assert next(m for k, m in seen if k == "cancel")["reason"] == "cancelled"


async def test_a_pin_approval_is_kept_by_the_engine_not_the_chain(db: Any, app: Any) -> None:
    link, _ = await app(answer(True, "forever"))
    changed = AskRequest("search", {"q": "x"}, Decision(
        "ask", "pinning", "tool changed", detail={"diff": "-old\n+new", "digest": "v2:abc"}))
    c = chain(db, app_link=link)
    outcome = await c.resolve(changed, FakeChannel(modes=()))
    # Forever is offered and kept for the held-call code to store as a pin; no trust row.
    assert (outcome.allow, outcome.remember, outcome.grant_id) == (True, "forever", None)
    assert trust_rows(db) == []
    # The chain remembers nothing about tools: a remembered answer here would skip the
    # contracts that run after pinning (the engine holds pin approvals instead).
    assert (await c.resolve(changed, FakeChannel(modes=()))).decided_by == "app"


async def test_forever_without_anything_to_store_is_only_a_session_answer(
    db: Any, app: Any
) -> None:
    link, _ = await app(answer(True, "forever"))
    unlisted = AskRequest("search", {"q": "x"}, Decision(
        "ask", "pinning", "not listed", detail={"pin": "unlisted", "digest": ""}))
    outcome = await chain(db, app_link=link).resolve(unlisted, FakeChannel(modes=()))
    assert (outcome.allow, outcome.remember) == (True, "session")
    assert trust_rows(db) == []


# -- 2026-07-28 era ------------------------------------------------------------------------


def retry_params(first: Any, response: Any, arguments: dict[str, Any] = ARGS) -> dict[str, Any]:
    return {"name": "send_email", "arguments": arguments,
            "inputResponses": {INPUT_KEY: response},
            "requestState": first.input_required["requestState"]}


def resume(c: AskChain, req: AskRequest, params: dict[str, Any]) -> Outcome:
    """What a held retry does (proxy/ask/held.py): open its sealed state, read its answer."""
    outcome = c.answer_retry(req, c.open_retry(req, params))
    assert outcome is not None, "the retry held no answer to this question"
    return outcome


async def test_new_era_answers_with_input_required_then_resumes(db: Any) -> None:
    c = chain(db)
    first = await c.resolve(REQ, FakeChannel(era="2026-07-28"))
    assert not first.allow and first.input_required is not None
    result = first.input_required
    assert result["resultType"] == "input_required"
    request = result["inputRequests"][INPUT_KEY]
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["properties"]["allow"]["type"] == "boolean"

    params = retry_params(first, ALLOW_FOREVER)
    assert c.is_retry(params) and not c.is_retry({"name": "send_email", "requestState": "up"})
    outcome = resume(c, REQ, params)
    assert (outcome.allow, outcome.decided_by, outcome.remember) == (True, "elicitation", "forever")
    assert trust_rows(db) == [("gmail", "send_email", "new@random.com", "elicitation", 0)]
    assert without_retry_fields(params) == {"name": "send_email", "arguments": ARGS}

    replayed = resume(c, REQ, params)
    assert not replayed.allow and "already used" in replayed.reason


async def test_new_era_decline_forged_and_swapped_arguments(db: Any) -> None:
    c = chain(db)
    first = await c.resolve(REQ, FakeChannel(era="2026-07-28"))
    assert not resume(c, REQ, retry_params(first, {"action": "decline"})).allow

    forged = retry_params(first, ALLOW_FOREVER)
    forged["requestState"] = forged["requestState"][:-4] + "AAAA"
    assert not resume(c, REQ, forged).allow

    second = await c.resolve(REQ, FakeChannel(era="2026-07-28"))
    evil = {**ARGS, "to": "attacker@evil.com"}
    evil_req = AskRequest("send_email", evil,
                          Decision("ask", "sink_gate", "unproven", "attacker@evil.com"))
    swapped = resume(c, evil_req, retry_params(second, ALLOW_FOREVER, evil))
    assert not swapped.allow and "arguments differ" in swapped.reason
    mismatched = resume(c, REQ, retry_params(second, ALLOW_FOREVER, evil))
    assert not mismatched.allow and "does not match" in mismatched.reason

    third = await c.resolve(REQ, FakeChannel(era="2026-07-28"))
    empty = resume(c, REQ, retry_params(third, {"action": "accept", "content": {}}))
    assert not empty.allow
    assert trust_rows(db) == []


async def test_new_era_client_without_elicitation_goes_to_the_app(db: Any, app: Any) -> None:
    link, _ = await app(answer(True))
    outcome = await chain(db, app_link=link).resolve(REQ, FakeChannel(era="2026-07-28", modes=()))
    assert (outcome.allow, outcome.decided_by, outcome.input_required) == (True, "app", None)


async def test_an_approval_covers_every_unproven_destination_of_the_call(db: Any) -> None:
    both = AskRequest(
        "send_email", {"to": ["a@x.org"], "cc": ["b@y.org"]},
        Decision("ask", "sink_gate", "unproven", "a@x.org", checked=(
            DestinationCheck("to[0]", "a@x.org", "ask", "unproven"),
            DestinationCheck("cc[0]", "b@y.org", "ask", "unproven"),
            DestinationCheck("cc[1]", "me@corp.example", "allow", "trusted"),
        )),
    )
    channel = FakeChannel(ALLOW_FOREVER)
    assert (await chain(db).resolve(both, channel)).allow
    assert "a@x.org, b@y.org" in channel.requests[0][1]["message"]
    assert sorted(r[2] for r in trust_rows(db)) == ["a@x.org", "b@y.org"]
    assert (await chain(db).resolve(both, FakeChannel(hang=True))).decided_by == "trust"

    db.execute("UPDATE trust SET revoked_at = 1 WHERE destination = 'b@y.org'")
    outcome = await chain(db).resolve(both, FakeChannel({"action": "decline"}))
    assert (outcome.allow, outcome.decided_by) == (False, "elicitation")  # b needs a human again
