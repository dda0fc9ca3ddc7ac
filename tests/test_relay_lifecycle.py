"""Lifecycle of `gatewatch run`: exit codes, signals, start failures, and no orphans left."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from tests.relay_pipes import RawProxy, echo_upstream, events, pid_alive, query, wait_for

pytestmark = pytest.mark.e2e


async def _pids(proxy: RawProxy) -> tuple[int, int]:
    answer = await proxy.request("p", "pid")
    return answer["result"]["pid"], answer["result"]["child"]


async def test_client_closes_stdin_proxy_exits_with_upstream_code_no_orphans(
    db_file: Path,
) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream("--eof-exit", "5", "--spawn-child"))
    try:
        up, grandchild = await _pids(proxy)
        assert pid_alive(up) and pid_alive(grandchild)
        proxy.close_stdin()
        assert await proxy.wait() == 5
    finally:
        await proxy.kill()
    # The upstream and whatever it started (its process group) are gone with the proxy.
    await wait_for(lambda: not pid_alive(up) and not pid_alive(grandchild), what="no orphans")
    (session,) = query(db_file, "SELECT * FROM sessions")
    assert (session["upstream_pid"], session["exit_code"]) == (up, 5)
    assert session["end_reason"] == "client closed" and session["ended_at"] is not None


async def test_upstream_exit_code_becomes_the_proxys(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    try:
        assert (await proxy.request(1, "ping"))["result"] == {"ok": True}
        await proxy.send({"jsonrpc": "2.0", "id": 2, "method": "exit", "params": {"code": 3}})
        assert await proxy.wait() == 3
    finally:
        await proxy.kill()
    (session,) = query(db_file, "SELECT exit_code, end_reason FROM sessions")
    assert tuple(session) == (3, "upstream exited")
    last = events(db_file)[-1]
    assert (last["kind"], last["reason"]) == ("lifecycle", "upstream exited")
    # The session's own record of its audit queue: it never made the relay wait.
    detail = json.loads(last["detail"])
    assert detail["exit_code"] == 3 and detail["audit_waited"] == 0
    assert 0 < detail["audit_high_water"] < 10_000


async def test_upstream_exit_is_noticed_while_its_child_holds_stdout(db_file: Path) -> None:
    """A server that started a helper (which inherited its stdout) and then exited."""
    proxy = await RawProxy.start(db_file, echo_upstream("--spawn-child"))
    try:
        up, grandchild = await _pids(proxy)
        await proxy.send({"jsonrpc": "2.0", "id": 2, "method": "exit", "params": {"code": 3}})
        assert await proxy.wait() == 3
    finally:
        await proxy.kill()
    await wait_for(lambda: not pid_alive(up) and not pid_alive(grandchild), what="no orphans")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_to_proxy_ends_upstream(db_file: Path, sig: signal.Signals) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream("--spawn-child"))
    try:
        up, grandchild = await _pids(proxy)
        proxy.proc.send_signal(sig)
        await proxy.wait()
    finally:
        await proxy.kill()
    await wait_for(lambda: not pid_alive(up) and not pid_alive(grandchild), what="no orphans")
    (session,) = query(db_file, "SELECT end_reason, ended_at FROM sessions")
    assert session["end_reason"] == "signal" and session["ended_at"] is not None


@pytest.mark.slow
async def test_upstream_that_ignores_eof_is_terminated(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream("--ignore-eof"))
    try:
        up, _ = await _pids(proxy)
        proxy.close_stdin()
        code = await proxy.wait()
    finally:
        await proxy.kill()
    assert code == 128 + signal.SIGTERM  # stopped by the proxy's SIGTERM after the grace period
    assert not pid_alive(up)


async def test_proxy_killed_upstream_does_not_linger(db_file: Path) -> None:
    """Even SIGKILL (no cleanup at all) does not leave the upstream behind (PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("parent-death signal is Linux-only")
    proxy = await RawProxy.start(db_file, echo_upstream())
    try:
        up, _ = await _pids(proxy)
        proxy.proc.kill()
        await proxy.wait()
    finally:
        await proxy.kill()
    await wait_for(lambda: not pid_alive(up), what="upstream gone after the proxy's SIGKILL")


async def test_upstream_that_cannot_start(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, ["/nonexistent/mcp-server-nope", "--flag"])
    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        answer = await proxy.request(1, "initialize", init)
        proxy.close_stdin()
        code = await proxy.wait()
    finally:
        await proxy.kill()
    assert code == 127
    assert answer["error"]["code"] < 0 and "command not found" in answer["error"]["message"]
    err = proxy.stderr.decode()
    assert "/nonexistent/mcp-server-nope" in err and "command not found" in err
    assert "Traceback" not in err
    rows = events(db_file)
    assert any(r["kind"] == "lifecycle" and "command not found" in r["reason"] for r in rows)
    replied = [r for r in rows if r["direction"] == "gw2c"]
    assert [(r["kind"], r["method"], r["rpc_id"]) for r in replied] == [
        ("error", "initialize", "1")
    ]
    (session,) = query(db_file, "SELECT exit_code, upstream_pid FROM sessions")
    assert tuple(session) == (127, None)


async def test_unusable_audit_database_is_refused_cleanly(db_file: Path, tmp_path: Path) -> None:
    """No audit, no relay (fail closed), but said plainly to the user and the client."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    pidfile = tmp_path / "upstream.pid"
    command = echo_upstream("--pidfile", str(pidfile))
    proxy = await RawProxy.start(blocker / "gatewatch.db", command)
    try:
        answer = await proxy.request(1, "initialize", {"protocolVersion": "2025-06-18"})
        code = await proxy.wait()
    finally:
        await proxy.kill()
    assert code == 1
    assert "cannot open the audit database" in answer["error"]["message"]
    err = proxy.stderr.decode()
    assert f"cannot open the audit database {blocker / 'gatewatch.db'}" in err
    assert "Traceback" not in err
    # The upstream it had already started is not left behind.
    up = int(pidfile.read_text())
    await wait_for(lambda: not pid_alive(up), what="upstream gone")


async def test_session_records_client_and_negotiated_version(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "some-client", "version": "9.1"},
    }
    try:
        answer = await proxy.request(1, "initialize", init)
        assert answer["result"]["protocolVersion"] == "2024-11-05"
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    (session,) = query(db_file, "SELECT * FROM sessions")
    assert (session["client_name"], session["client_version"]) == ("some-client", "9.1")
    assert session["era"] == "handshake" and session["can_elicit"] == 1
    # What the two sides agreed on, not what the client asked for.
    assert session["protocol_version"] == "2024-11-05"


async def test_upstream_stderr_reaches_the_client_log(db_file: Path) -> None:
    script = "import sys; sys.stderr.write('upstream says hi\\n'); sys.stderr.flush()"
    proxy = await RawProxy.start(db_file, [sys.executable, "-c", script])
    try:
        code = await asyncio.wait_for(proxy.wait(), 20)
    finally:
        await proxy.kill()
    assert code == 0
    assert b"upstream says hi" in proxy.stderr


async def test_a_killed_proxys_session_is_closed_by_the_next_proxy(db_file: Path) -> None:
    """A client that SIGKILLs its servers (Codex does, 1 ms after SIGTERM) leaves no session
    shown as running: the next proxy to start closes it at its last audit row."""
    first = await RawProxy.start(db_file, echo_upstream())
    try:
        await _pids(first)
        await wait_for(lambda: query(db_file, "SELECT id FROM events"), what="a first audit row")
        first.proc.kill()
        await first.wait()
    finally:
        await first.kill()
    (killed,) = query(db_file, "SELECT id, ended_at FROM sessions")
    assert killed["ended_at"] is None  # nothing could be written at SIGKILL

    second = await RawProxy.start(db_file, echo_upstream())
    try:
        await _pids(second)
        row = await wait_for(
            lambda: query(
                db_file, "SELECT ended_at, end_reason FROM sessions WHERE id = ? "
                "AND ended_at IS NOT NULL", (killed["id"],),
            ),
            what="the vanished session closed",
        )
        assert "vanished" in row[0]["end_reason"]
        last = query(db_file, "SELECT MAX(ts) AS ts FROM events WHERE session_id = ?",
                     (killed["id"],))[0]["ts"]
        assert row[0]["ended_at"] == last
        # the running proxy's own session stays open
        open_rows = query(db_file, "SELECT id FROM sessions WHERE ended_at IS NULL")
        assert [r["id"] for r in open_rows] != [killed["id"]] and len(open_rows) == 1
    finally:
        second.close_stdin()
        await second.wait()
