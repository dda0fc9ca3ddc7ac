"""Malformed frames as raw bytes into a real `gatewatch run`, in front of real servers.

What a user notices: none of these lines ever runs a tool, each request among them gets
exactly one answer (from Gatewatch, with its id), and the traffic after them is unaffected.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.hostile_frames import malformed_calls
from tests.relay_pipes import RawProxy, echo_upstream, events
from tests.support import npm_server, upstream
from tests.test_relay_property import answered_as_expected, lenient, lenient_requests, mutated

pytestmark = pytest.mark.e2e
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "frame-tests", "version": "0"}}


@pytest.fixture(autouse=True)
def no_detector(gw_home: Path) -> None:
    (gw_home / "config").mkdir(exist_ok=True)
    (gw_home / "config" / "settings.yaml").write_text("detector: false\n")


async def handshake(proxy: RawProxy) -> list[str]:
    assert "result" in await proxy.request(0, "initialize", INIT)
    await proxy.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    listed = await proxy.request("list", "tools/list")
    return [t["name"] for t in listed["result"]["tools"]]


async def until_answer(proxy: RawProxy, rpc_id: Any) -> tuple[Any, list[Any]]:
    """The answer to `rpc_id`, and every other message that came before it."""
    before: list[Any] = []
    while True:
        msg = await proxy.recv()
        if isinstance(msg, dict) and msg.get("id") == rpc_id and "method" not in msg:
            return msg, before
        before.append(msg)


def numbered(first_id: int, tool: str, key: str, value: str, **kw: str) -> dict[str, bytes]:
    """Every malformed variant, each with its own id (first_id, first_id + 1, ...)."""
    names = list(malformed_calls(0, tool, key, value, **kw))
    return {name: malformed_calls(first_id + n, tool, key, value, **kw)[name]
            for n, name in enumerate(names)}


def text_of(answer: dict[str, Any]) -> str:
    return json.dumps(answer)


async def probe_each(
    proxy: RawProxy, lines: dict[str, bytes], clean: dict[str, Any], first_id: int
) -> dict[str, Any]:
    """Send each line, then a clean call; return the one answer each line got (or None)."""
    got: dict[str, Any] = {}
    for n, (name, data) in enumerate(lines.items()):
        rpc_id = first_id + n
        await proxy.send_raw(data + b"\n")
        follow = {"jsonrpc": "2.0", "id": 10_000 + rpc_id, "method": "tools/call",
                  "params": clean}
        await proxy.send(follow)
        answer, before = await until_answer(proxy, 10_000 + rpc_id)
        assert not answer["result"].get("isError"), (name, answer)  # later traffic is fine
        mine = [m for m in before if isinstance(m, dict) and "method" not in m]
        assert len(mine) <= 1, (name, mine)
        got[name] = mine[0] if mine else None
    return got


async def test_malformed_calls_never_run_on_a_recording_server(tmp_path: Path, db_file) -> None:
    log = tmp_path / "calls.jsonl"
    proxy = await RawProxy.start(db_file, upstream("recording_server"), name="rec",
                                 env={"CALL_LOG": str(log)})
    try:
        assert "send_email" in await handshake(proxy)
        requests = numbered(100, "send_email", "to", "thief@evil.example")
        notes = malformed_calls(None, "send_email", "to", "thief@evil.example")
        clean = {"name": "echo", "arguments": {"text": "still fine"}}
        got = await probe_each(proxy, requests, clean, first_id=100)
        for n, (name, answer) in enumerate(got.items()):
            assert answer is not None and answer["id"] == 100 + n, (name, answer)
            assert answer["error"]["code"] in (-32700, -32600), (name, answer)
        silent = await probe_each(proxy, {f"{k} (notification)": v for k, v in notes.items()},
                                  clean, first_id=500)
        assert all(answer is None for answer in silent.values()), silent
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    executed = [json.loads(x) for x in log.read_text().splitlines()]
    # Only the clean follow-up calls ran: one per malformed line, nothing else.
    assert executed == [{"tool": "echo", "arguments": {"text": "still fine"}}] * (
        len(requests) + len(notes))
    refused = [r for r in events(db_file) if r["direction"] == "c2s" and r["contract"] == "frame"]
    assert len(refused) == len(requests) + len(notes)
    assert all(r["verdict"] == "deny" and r["reason"] for r in refused)


async def test_malformed_reads_never_reach_the_filesystem_server(tmp_path: Path, db_file) -> None:
    root = tmp_path / "root"
    allowed = root / "allowed"
    allowed.mkdir(parents=True)
    (allowed / "note.txt").write_text("public note")
    secret = root / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"servers:\n  fs:\n    allowed_paths: [{str(allowed)!r}]\n")
    # The server may read anything under root: only Gatewatch stands in front of the secret.
    proxy = await RawProxy.start(db_file, [npm_server("filesystem"), str(root)],
                                 "--policy", str(policy), name="fs")
    try:
        assert "read_text_file" in await handshake(proxy)
        lines = numbered(200, "read_text_file", "path", str(secret),
                         benign="list_allowed_directories")
        clean = {"name": "read_text_file", "arguments": {"path": str(allowed / "note.txt")}}
        got = await probe_each(proxy, lines, clean, first_id=200)
        for name, answer in got.items():
            assert answer is not None and "TOP-SECRET" not in text_of(answer), (name, answer)
            assert "gatewatch refused" in answer["error"]["message"], (name, answer)
        # The same read sent cleanly is denied by the policy, not by the frame check.
        clean_secret = {"name": "read_text_file", "arguments": {"path": str(secret)}}
        denied = await proxy.request(300, "tools/call", clean_secret)
        assert denied["result"]["isError"] and "outside the allowed paths" in text_of(denied)
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()


async def test_unreadable_results_are_withheld_from_the_client(db_file) -> None:
    """Upstream → client: a result that does not parse strictly reaches its request once, as
    an error with a trace id; its original bytes are in the audit; the stream goes on."""
    bad_results = {
        "invalid UTF-8": b'{"jsonrpc":"2.0","id":%d,"result":{"text":"\xff"}}',
        "duplicate key": b'{"jsonrpc":"2.0","id":%d,"result":{"text":"a","text":"b"}}',
        "NaN": b'{"jsonrpc":"2.0","id":%d,"result":{"n":NaN}}',
        "lone surrogate": b'{"jsonrpc":"2.0","id":%d,"result":{"text":"\\ud800"}}',
    }
    proxy = await RawProxy.start(db_file, echo_upstream())
    traces = []
    try:
        for n, (name, template) in enumerate(bad_results.items()):
            raw = (template % n).hex()
            answer = await proxy.request(n, "raw", {"hex": raw})
            assert answer["error"]["code"] == -32001, (name, answer)
            traces.append(answer["error"]["data"]["trace_id"])
            assert (await proxy.request(f"ok-{n}", "ping"))["result"] == {"ok": True}
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    rows = events(db_file)
    for n, trace in enumerate(traces):
        [kept] = [r for r in rows if r["trace_id"] == trace and r["direction"] == "s2c"]
        assert kept["payload"].startswith(f'{{"jsonrpc":"2.0","id":{n}')


def lines_answered_as_expected(data: bytes, responses: int) -> bool:
    """answered_as_expected for what a pipe carries: a mutation that put a line break inside
    the frame made two lines, and each line is a frame of its own to the proxy (and to the
    upstream's reader)."""
    if b"\n" not in data:
        return answered_as_expected(data, responses)
    least = most = 0
    for line in data.split(b"\n"):
        value = lenient(line)
        requests = lenient_requests(line)
        least += requests
        most += len(value) if isinstance(value, list) and value else max(requests, 1)
    return least <= responses <= most


def test_a_frame_cut_by_a_line_break_is_answered_as_its_lines():
    cut = b'{\njsonrpc": "2.0", "id": 0, "method": "ping"}'
    assert not answered_as_expected(cut, 2)  # read whole, it is one frame
    assert lines_answered_as_expected(cut, 2)  # through a pipe: two lines, two parse errors
    assert not lines_answered_as_expected(cut, 3)
    assert lines_answered_as_expected(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', 1)
    assert not lines_answered_as_expected(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', 0)


_CUT_CALL = (b'{\njsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "echo", '
             b'"arguments": {"text": "", "to": ""}}}')


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(frames=st.lists(mutated(), min_size=20, max_size=20))
@example(frames=[_CUT_CALL, b"", b'\x00"jsonrpc": "2.0", "id": 0, "method": "ping"}'])
def test_mutated_frames_through_a_real_proxy_never_stall(
    frames: list[bytes], db_file: Path
) -> None:
    """The property test's mutations, through real pipes: each request a lenient reader sees is
    answered exactly once, a call after each is answered, the upstream never saw a line it could
    not parse (it would answer that with its own parse error).

    The call after each frame names a tool that is never listed, so it waits for Gatewatch's
    own tools/list behind any call the frame itself parked: its answer comes after the frame's."""

    async def scenario() -> None:
        proxy = await RawProxy.start(db_file, echo_upstream())
        try:
            for n, data in enumerate(frames):
                await proxy.send_raw(data + b"\n")
                await proxy.send({"jsonrpc": "2.0", "id": f"after-{n}", "method": "tools/call",
                                  "params": {"name": "never-listed", "arguments": {}}})
                answer, before = await until_answer(proxy, f"after-{n}")
                assert answer["result"]["isError"] is True
                flat = [m for b in before for m in (b if isinstance(b, list) else [b])]
                responses = [m for m in flat if isinstance(m, dict) and "method" not in m]
                assert lines_answered_as_expected(data, len(responses)), (data, before)
                assert not any("parse error" in json.dumps(m) for m in responses), (data, before)
            proxy.close_stdin()
            assert await proxy.wait() == 0
        finally:
            await proxy.kill()

    asyncio.run(scenario())
