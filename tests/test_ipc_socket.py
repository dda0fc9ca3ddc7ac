"""The local socket with real processes: `gatewatch approve` serving, AppLink connecting."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from proxy.ipc import protocol
from proxy.ipc.address import SocketDirError, secure_socket_dir, socket_path
from proxy.ipc.client import AppLink
from proxy.ipc.server import SocketServer
from tests.support import Approver, serve

pytestmark = pytest.mark.e2e


def link(session: str = "s1", **kwargs: Any) -> AppLink:
    hello = protocol.proxy_hello(
        session_id=session, server="gmail", pid=os.getpid(), command=["mail"], started_at=0.0
    )
    app_link = AppLink(hello, reconnect_s=0.05, **kwargs)
    app_link.start()
    return app_link


def ask(ask_id: str) -> dict[str, Any]:
    return {"ask_id": ask_id, "session_id": "s1", "server": "gmail", "tool": "send_email",
            "destination": "new@random.com", "reason": "unproven recipient", "deadline_s": 55}


def test_socket_dir_open_to_others_is_refused(gw_home: Path) -> None:
    run = gw_home / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    with pytest.raises(SocketDirError, match=f"chmod 700 {run}"):
        secure_socket_dir()
    approver = Approver()
    assert approver.proc.wait(30) == 1
    approver.wait_for("gatewatch approve: socket directory")
    run.chmod(0o700)
    assert secure_socket_dir() == socket_path()


async def test_socket_is_private_and_removed_on_exit(approvers: list[Approver]) -> None:
    approver = serve(approvers, "--auto", "allow")
    mode = stat.S_IMODE(socket_path().stat().st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(socket_path().parent.stat().st_mode) == 0o700
    approver.stop()
    assert not socket_path().exists()


def test_stale_socket_is_replaced(approvers: list[Approver]) -> None:
    path = secure_socket_dir()
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # bound, never listening: what a crashed app leaves behind
    dead.close()
    assert path.exists()
    serve(approvers, "--auto", "allow")
    probe = socket.socket(socket.AF_UNIX)
    probe.connect(str(path))  # the new server accepts
    probe.close()


def test_a_second_server_is_refused(approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "allow")
    second = Approver("--auto", "deny")
    approvers.append(second)
    assert second.proc.wait(30) == 1
    second.wait_for("gatewatch approve: another Gatewatch app or approver already serves")
    probe = socket.socket(socket.AF_UNIX)
    probe.connect(str(socket_path()))  # the first one still serves
    probe.close()


async def test_decisions_from_an_approver(approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "allow", "--remember", "forever", "--expires", "24h")
    app = link()
    try:
        assert await app.wait_connected(20)
        decision = await app.ask(ask("s1-1"), timeout=30)
        assert decision is not None
        assert (decision["allow"], decision["remember"], decision["expires_in_s"]) == (
            True, "forever", 86400)
    finally:
        await app.close()


async def test_deny_from_an_approver(approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "deny")
    app = link()
    try:
        assert await app.wait_connected(20)
        decision = await app.ask(ask("s1-1"), timeout=30)
        assert decision is not None and decision["allow"] is False
    finally:
        await app.close()


async def test_no_app_means_no_answer_at_once() -> None:
    app = link()
    try:
        # Returns None right away (the proxy never waits for an app that is not there).
        assert await asyncio.wait_for(app.ask(ask("s1-1"), timeout=600), 5) is None
    finally:
        await app.close()


async def test_proxy_connects_when_the_app_starts_later(approvers: list[Approver]) -> None:
    app = link()
    try:
        assert not app.connected
        await asyncio.to_thread(serve, approvers, "--auto", "allow")
        assert await app.wait_connected(20)
        assert (await app.ask(ask("s1-1"), timeout=30) or {}).get("allow") is True
    finally:
        await app.close()


async def test_unanswered_question_times_out_and_is_withdrawn(approvers: list[Approver]) -> None:
    approver = serve(approvers, "--auto", "ignore")
    app = link()
    try:
        assert await app.wait_connected(20)
        assert await app.ask(ask("s1-1"), timeout=0.5) is None
        await asyncio.to_thread(approver.wait_for, "withdrawn s1-1: timeout")
    finally:
        await app.close()


async def test_approver_killed_mid_question_is_no_answer(approvers: list[Approver]) -> None:
    approver = serve(approvers, "--auto", "ignore")
    app = link()
    try:
        assert await app.wait_connected(20)
        pending = asyncio.create_task(app.ask(ask("s1-1"), timeout=600))
        await asyncio.to_thread(approver.wait_for, "ask s1-1")
        approver.proc.kill()
        assert await asyncio.wait_for(pending, 20) is None  # long before its own timeout
        assert not app.connected
    finally:
        await app.close()


async def test_cancel_withdraws_the_question(approvers: list[Approver]) -> None:
    approver = serve(approvers, "--auto", "ignore")
    app = link()
    try:
        assert await app.wait_connected(20)
        pending = asyncio.create_task(app.ask(ask("s1-7"), timeout=600))
        await asyncio.to_thread(approver.wait_for, "ask s1-7")
        app.cancel("s1-7")
        assert await asyncio.wait_for(pending, 20) is None
        await asyncio.to_thread(approver.wait_for, "withdrawn s1-7: cancelled")
    finally:
        await app.close()


async def test_two_proxies_asking_at_once(approvers: list[Approver]) -> None:
    approver = serve(approvers, "--auto", "allow", "--delay", "0.3")
    first, second = link("p1"), link("p2")
    try:
        assert await first.wait_connected(20) and await second.wait_connected(20)
        answers = await asyncio.gather(
            first.ask({**ask("p1-1"), "session_id": "p1"}, timeout=30),
            second.ask({**ask("p2-1"), "session_id": "p2"}, timeout=30),
        )
        assert [a["ask_id"] for a in answers if a and a["allow"]] == ["p1-1", "p2-1"]
        approver.wait_for("decided p", count=2)
    finally:
        await first.close()
        await second.close()


async def test_controls_reach_the_proxy_and_heartbeats_reach_the_app() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    got_heartbeat = asyncio.Event()

    def on_event(kind: str, message: dict[str, Any]) -> None:
        events.append((kind, message))
        if kind == "heartbeat":
            got_heartbeat.set()

    async def never(message: dict[str, Any]) -> None:
        return None

    server = SocketServer(never, on_event=on_event)
    await server.start()
    controls: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    app = link(on_control=controls.put_nowait, stats=lambda: {"calls": 3, "denied": 1},
               heartbeat_s=0.05)
    try:
        assert await app.wait_connected(20)
        assert server.control("pause") == 1
        assert (await asyncio.wait_for(controls.get(), 20))["action"] == "pause"
        await asyncio.wait_for(got_heartbeat.wait(), 20)
        beat = next(m for k, m in events if k == "heartbeat")
        assert (beat["session_id"], beat["calls"], beat["denied"]) == ("s1", 3, 1)
        app.update_session(era="handshake", can_elicit=False, client={"name": "claude-code"})
        await asyncio.wait_for(_until(lambda: any(k == "session" for k, _ in events)), 20)
        hello = next(m for k, m in events if k == "hello")
        assert hello["server"] == "gmail" and hello["role"] == "proxy"
    finally:
        await app.close()
        await server.close()


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_interactive_approver_reads_answers_from_its_terminal() -> None:
    import subprocess

    from tests.support import GATEWATCH, child_env

    proc = await asyncio.create_subprocess_exec(
        *GATEWATCH, "approve", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=child_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    app = link()
    try:
        assert b"serving" in await asyncio.wait_for(proc.stdout.readline(), 20)
        assert await app.wait_connected(20)
        first = asyncio.create_task(app.ask(ask("s1-1"), timeout=60))
        second = asyncio.create_task(app.ask({**ask("s1-2"), "destination": None,
                                               "remember_choices": ["once", "session"]}, 60))
        proc.stdin.write(b"y\nf\n")  # allow s1-1, remember forever
        proc.stdin.write(b"y\nforever\n")  # s1-2 does not offer forever: once
        await proc.stdin.drain()
        one, two = await asyncio.wait_for(asyncio.gather(first, second), 30)
        assert one is not None and (one["allow"], one["remember"]) == (True, "forever")
        assert two is not None and (two["allow"], two["remember"]) == (True, "once")
        proc.stdin.write(b"n\n")
        await proc.stdin.drain()
        third = await app.ask(ask("s1-3"), timeout=30)
        assert third is not None and third["allow"] is False
    finally:
        await app.close()
        proc.terminate()
        await proc.wait()
