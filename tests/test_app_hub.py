"""The hub on the real local socket, against real clients: raw sockets and the proxy's AppLink."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app import socket_path
from app.ask_controller import AskController
from app.hub import Hub
from app.popup import GUARD_MS, ApprovalPopup
from proxy.ipc.address import SocketDirError
from tests.support import ROOT, child_env


class RawProxy:
    """A proxy written with plain sockets, speaking docs/ipc.md by hand."""

    def __init__(self, qtbot: QtBot, session: str = "s1", server: str = "gmail",
                 hello: bool = True) -> None:
        self.qtbot = qtbot
        self.session = session
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path.server_name())
        self.sock.setblocking(False)
        self.received: list[dict[str, Any]] = []
        self._buf = b""
        self.eof = False
        if hello:
            line = json.dumps({"type": "hello", "protocol": 1, "role": "proxy",
                               "session_id": session, "server": server, "pid": 4242,
                               "command": ["npx", "srv"], "started_at": 1.0, "client": None,
                               "era": None, "can_elicit": None}).encode() + b"\n"
            self.sock.sendall(line[:10])  # a message split across writes
            self.qtbot.wait(20)
            self.sock.sendall(line[10:])

    def send(self, *messages: dict[str, Any]) -> None:
        self.sock.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def ask(self, ask_id: str, destination: str = "new@random.com", tool: str = "send_email",
            deadline: float = 100, digest: str = "same-arguments") -> None:
        self.send({"type": "ask", "ask_id": ask_id, "session_id": self.session,
                   "server": "gmail", "tool": tool, "destination": destination,
                   "arguments_preview": "{}", "arguments_digest": digest,
                   "contract": "sink_gate", "reason": "untrusted",
                   "origin": None, "client": None, "deadline_s": deadline,
                   "created_at": 1.0})

    def _pump(self) -> None:
        try:
            while chunk := self.sock.recv(65536):
                self._buf += chunk
            self.eof = True
        except BlockingIOError:
            pass
        *lines, self._buf = self._buf.split(b"\n")
        self.received += [json.loads(line) for line in lines if line]

    def closed_by_peer(self) -> bool:
        self._pump()
        return self.eof

    def wait_for(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        found: list[dict[str, Any]] = []

        def seen() -> bool:
            self._pump()
            found[:] = [m for m in self.received if match(m)]
            return bool(found)

        self.qtbot.waitUntil(seen, timeout=5000)
        return found[0]

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def hub(qtbot: QtBot) -> Iterator[Hub]:
    server = Hub("test")
    assert server.listen()
    yield server
    server.close()


@pytest.fixture
def asking(hub: Hub, qtbot: QtBot) -> AskController:
    popup = ApprovalPopup()
    qtbot.addWidget(popup)
    return AskController(hub, popup, lambda: 60.0)


def decisions(proxy: RawProxy) -> list[dict[str, Any]]:
    proxy._pump()
    return [m for m in proxy.received if m["type"] == "decision"]


def test_hello_both_ways_and_a_private_socket(hub: Hub, qtbot: QtBot, gw_home: Path) -> None:
    proxy = RawProxy(qtbot)
    hello = proxy.wait_for(lambda m: m["type"] == "hello")
    assert hello["role"] == "app" and hello["protocol"] == 1
    qtbot.waitUntil(lambda: len(hub.proxies()) == 1)
    assert hub.proxies()[0].server == "gmail"
    path = Path(socket_path.server_name())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    proxy.send({"type": "heartbeat", "session_id": "s1", "calls": 12, "denied": 1,
                "last_verdict": "allow", "paused": False},
               {"type": "session", "session_id": "s1",
                "client": {"name": "cursor", "version": "1.2"}})
    qtbot.waitUntil(lambda: hub.proxies()[0].calls == 12
                    and hub.proxies()[0].client_label == "cursor 1.2")
    proxy.close()
    qtbot.waitUntil(lambda: hub.proxies() == [])


def test_a_newer_protocol_is_refused(hub: Hub, qtbot: QtBot) -> None:
    proxy = RawProxy(qtbot, hello=False)
    proxy.send({"type": "hello", "protocol": 2, "role": "proxy", "session_id": "x"})
    qtbot.waitUntil(proxy.closed_by_peer, timeout=5000)
    assert hub.proxies() == []


def test_messages_before_hello_and_junk_lines_are_ignored(hub: Hub, asking: AskController,
                                                         qtbot: QtBot) -> None:
    early = RawProxy(qtbot, hello=False)
    early.ask("early-1")
    proxy = RawProxy(qtbot, session="s2")
    proxy.sock.sendall(b"not json\n[1]\n")
    proxy.ask("s2-1")
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 1)
    group = asking.queue.current()
    assert group is not None and group.first.ask_id == "s2-1"


def test_identical_questions_from_two_proxies_get_one_answer(
    hub: Hub, asking: AskController, qtbot: QtBot
) -> None:
    a, b = RawProxy(qtbot, "a"), RawProxy(qtbot, "b")
    a.ask("a-1")
    b.ask("b-1")
    a.ask("a-2", destination="other@x.org")
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 3)
    popup = asking.popup
    assert popup.isVisible()
    assert popup.position.text() == "1 of 2"
    assert "2 identical calls" in popup.merged.text()
    popup.remember_session.setChecked(True)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.allow_button.click()
    expected = {"allow": True, "remember": "session", "expires_in_s": None}
    assert {k: a.wait_for(lambda m: m.get("ask_id") == "a-1")[k] for k in expected} == expected
    assert {k: b.wait_for(lambda m: m.get("ask_id") == "b-1")[k] for k in expected} == expected
    # The next question shows, with its choices reset.
    assert popup.headline.text().endswith("other@x.org")
    assert popup.remember_once.isChecked()
    assert popup.position.text() == ""
    popup.deny_button.click()
    denied = a.wait_for(lambda m: m.get("ask_id") == "a-2")
    assert denied["allow"] is False and denied["remember"] == "once"
    assert not popup.isVisible()


def test_cancelled_question_leaves_queue_and_popup(hub: Hub, asking: AskController,
                                                   qtbot: QtBot) -> None:
    proxy = RawProxy(qtbot)
    proxy.ask("s1-1")
    qtbot.waitUntil(asking.popup.isVisible)
    proxy.send({"type": "cancel", "ask_id": "s1-1", "reason": "cancelled"})
    qtbot.waitUntil(lambda: not asking.popup.isVisible())
    assert len(asking.queue) == 0 and asking.missed == 0
    assert decisions(proxy) == []


def test_a_proxy_cannot_cancel_another_proxys_question(hub: Hub, asking: AskController,
                                                       qtbot: QtBot) -> None:
    # Ask ids are each proxy's own: another proxy reusing one cancels only its own question.
    honest, other = RawProxy(qtbot, "honest"), RawProxy(qtbot, "other")
    honest.ask("q-1")
    other.ask("q-1")
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 2)
    other.send({"type": "cancel", "ask_id": "q-1", "reason": "cancelled"})
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 1)
    group = asking.queue.current()
    assert group is not None and [q.session_id for q in group.members] == ["honest"]
    asking.popup.deny_button.click()
    assert honest.wait_for(lambda m: m.get("ask_id") == "q-1")["allow"] is False
    assert decisions(other) == []


def test_proxy_timeout_counts_as_missed(hub: Hub, asking: AskController, qtbot: QtBot) -> None:
    proxy = RawProxy(qtbot)
    proxy.ask("s1-1")
    qtbot.waitUntil(asking.popup.isVisible)
    proxy.send({"type": "cancel", "ask_id": "s1-1", "reason": "timeout"})
    qtbot.waitUntil(lambda: asking.missed == 1)
    assert not asking.popup.isVisible()


def test_proxy_exit_takes_its_questions_along(hub: Hub, asking: AskController,
                                              qtbot: QtBot) -> None:
    leaving, staying = RawProxy(qtbot, "leaving"), RawProxy(qtbot, "staying")
    leaving.ask("l-1")
    leaving.ask("l-2", destination="x@y.z")
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 2)
    staying.ask("s-1", destination="keep@me.org")
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 3)
    leaving.close()
    qtbot.waitUntil(lambda: asking.queue.pending_calls() == 1)
    assert asking.popup.isVisible()
    assert asking.popup.headline.text().endswith("keep@me.org")


def test_countdown_expiry_denies_and_marks_missed(hub: Hub, qtbot: QtBot) -> None:
    popup = ApprovalPopup()
    qtbot.addWidget(popup)
    asking = AskController(hub, popup, lambda: 1.0)
    proxy = RawProxy(qtbot)
    proxy.ask("s1-1")
    answer = proxy.wait_for(lambda m: m["type"] == "decision")
    assert answer["allow"] is False and answer["remember"] == "once"
    assert asking.missed == 1


def test_only_one_server_and_a_second_launch_wakes_the_first(hub: Hub, qtbot: QtBot) -> None:
    second = Hub("test")
    assert second.listen() is False
    shown: list[bool] = []
    hub.show_requested.connect(lambda: shown.append(True))
    # The launcher blocks until the app hangs up, so the app runs in another process here.
    launcher = subprocess.Popen(
        [sys.executable, "-c", "import sys; from PySide6.QtCore import QCoreApplication; "
         "app = QCoreApplication([]); from app.hub import wake_running_app; "
         "from app.hub import Wake; sys.exit(0 if wake_running_app() is Wake.WOKEN else 3)"],
        env=child_env(),
    )
    qtbot.waitUntil(lambda: launcher.poll() is not None, timeout=20000)
    assert launcher.returncode == 0
    assert shown == [True]
    hub.close()
    # The first one is gone: now the second may serve.
    assert second.listen() is True
    second.close()


def _launcher_says(timeout_ms: int) -> str:
    """What wake_running_app() reports, from another process (it blocks on the socket)."""
    launcher = subprocess.run(
        [sys.executable, "-c", "from PySide6.QtCore import QCoreApplication; "
         "app = QCoreApplication([]); from app.hub import wake_running_app; "
         f"print(wake_running_app({timeout_ms}).value)"],
        env=child_env(), capture_output=True, text=True, timeout=60,
    )
    assert launcher.returncode == 0, launcher.stderr
    return launcher.stdout.strip()


def test_a_second_launch_tells_silence_from_absence(gw_home: Path) -> None:
    """A server that accepts but never answers (an app still starting, or not ours) is not
    reported as woken, nor as absent: the launcher waits, then says it had no answer."""
    socket_path.prepare()
    path = socket_path.server_name()
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        mute.bind(path)
        mute.listen(4)  # the kernel accepts; nobody reads or hangs up
        assert _launcher_says(300) == "silent"
    finally:
        mute.close()
        os.unlink(path)
    assert _launcher_says(300) == "absent"


def test_a_stale_socket_file_is_replaced(qtbot: QtBot) -> None:
    socket_path.prepare()
    path = socket_path.server_name()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)  # a file nobody accepts on, like after a crash
    dead.close()
    assert os.path.exists(path)
    hub = Hub("test")
    assert hub.listen()
    proxy = RawProxy(qtbot)
    qtbot.waitUntil(lambda: len(hub.proxies()) == 1)
    proxy.close()
    hub.close()


def test_refuses_a_shared_socket_directory(gw_home: Path) -> None:
    run = gw_home / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    with pytest.raises(SocketDirError, match="chmod 700"):
        Hub("test").listen()


def test_answers_reach_the_proxy_side_applink(hub: Hub, asking: AskController,
                                              qtbot: QtBot) -> None:
    """The real client from proxy/ipc, in its own process, asks; the popup answers."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "app_clients" / "ask_once.py"), "p1",
         "new@random.com"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), text=True,
    )
    try:
        qtbot.waitUntil(asking.popup.isVisible, timeout=20000)
        assert asking.popup.client.text() == "Claude Desktop (claude-ai 0.1.0)"
        asking.popup.remember_forever.setChecked(True)
        asking.popup.expiry.setCurrentIndex(1)
        qtbot.waitUntil(asking.popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
        asking.popup.allow_button.click()
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=20000)
        out = [json.loads(line) for line in proc.stdout.read().splitlines()]  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    decision = out[-1]["decision"]
    assert decision["allow"] is True
    assert decision["remember"] == "forever" and decision["expires_in_s"] == 3600.0


def test_the_socket_is_touched_so_cleaners_leave_it(hub: Hub) -> None:
    path = socket_path.server_name()
    os.utime(path, (1_000_000, 1_000_000))  # looks abandoned to a runtime-dir cleaner
    hub._touch_socket()  # what the 30-minute timer runs
    assert os.stat(path).st_atime > 1_000_000 and os.stat(path).st_mtime > 1_000_000
