"""The app as a whole: wiring of tray state, pause, notifications; and real `gatewatch` launches."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app import socket_path, store
from app.application import GatewatchApp
from app.hub import Hub
from app.tray_state import TrayState
from proxy import paths
from proxy.settings import Settings
from proxy.store import schema
from tests.support import GATEWATCH, child_env
from tests.test_app_hub import RawProxy


@pytest.fixture
def gw(qtbot: QtBot, db_file: Path) -> Iterator[GatewatchApp]:
    hub = Hub("test")
    assert hub.listen()
    app = GatewatchApp(schema.connect(db_file), hub, paths.settings_path(), Settings())
    qtbot.addWidget(app.window)
    qtbot.addWidget(app.popup)
    yield app
    hub.close()


def test_tray_follows_proxies_questions_and_missed(gw: GatewatchApp, qtbot: QtBot) -> None:
    assert gw.tray.state is TrayState.IDLE
    proxy = RawProxy(qtbot)
    qtbot.waitUntil(lambda: gw.tray.state is TrayState.RUNNING)
    proxy.ask("s1-1")
    proxy.ask("s1-2", destination="b@c.d")
    qtbot.waitUntil(lambda: gw.tray.state is TrayState.PENDING)
    assert "2 questions waiting" in gw.tray.icon.toolTip()
    proxy.send({"type": "cancel", "ask_id": "s1-1", "reason": "timeout"},
               {"type": "cancel", "ask_id": "s1-2", "reason": "cancelled"})
    qtbot.waitUntil(lambda: gw.tray.state is TrayState.MISSED)
    gw.window.bring_forward()  # looking at the window acknowledges it
    assert gw.tray.state is TrayState.RUNNING


def test_pause_all_reaches_running_and_new_proxies(gw: GatewatchApp, qtbot: QtBot,
                                                   db_file: Path) -> None:
    first = RawProxy(qtbot, "one", "gmail")
    qtbot.waitUntil(lambda: len(gw.hub.proxies()) == 1)
    gw.tray.pause_action.trigger()
    assert first.wait_for(lambda m: m["type"] == "control")["action"] == "pause"
    assert gw.tray.state is TrayState.PAUSED
    assert gw.tray.pause_action.text() == "Resume all servers"
    assert store.is_paused(sqlite3.connect(db_file), "never-seen-server")
    late = RawProxy(qtbot, "two", "fs")
    assert late.wait_for(lambda m: m["type"] == "control")["action"] == "pause"
    gw.tray.pause_action.trigger()
    first.wait_for(lambda m: m.get("action") == "resume")
    assert gw.tray.state is TrayState.RUNNING


def test_notices_are_rate_limited_and_open_history(gw: GatewatchApp, qtbot: QtBot) -> None:
    event_id = int(gw.conn.execute(
        "INSERT INTO events (ts, session_id, server, direction, kind, method, tool, verdict, "
        "reason, trace_id) VALUES (?, 's1', 'gmail', 'c2s', 'request', 'tools/call', "
        "'send_email', 'deny', 'tainted', 'tr-9')", (time.time(),)).lastrowid or 0)
    proxy = RawProxy(qtbot)
    qtbot.waitUntil(lambda: len(gw.hub.proxies()) == 1)
    notice = {"type": "notice", "session_id": "s1", "server": "gmail", "tool": "send_email",
              "verdict": "deny", "reason": "tainted", "event_ts": time.time(), "trace_id": "tr-9"}
    for _ in range(5):
        proxy.send(notice)
    qtbot.waitUntil(lambda: gw.notifier.limiter.suppressed == 2)
    gw.tray.message_clicked.emit()  # the user clicks the notification
    assert gw.window.tabs.currentWidget() is gw.window.history
    row = gw.window.history.table.currentIndex().row()
    assert gw.window.history.model.event_id(row) == event_id


def _serving() -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(socket_path.server_name())
    except OSError:
        return False
    finally:
        probe.close()
    return True


def test_second_launch_wakes_the_first_and_quits(gw_home: Path) -> None:
    env = child_env({"QT_QPA_PLATFORM": "offscreen"})
    first = subprocess.Popen([*GATEWATCH], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _serving():
            assert first.poll() is None, first.stdout.read() if first.stdout else ""
            assert time.monotonic() < deadline, "the app never served its socket"
            time.sleep(0.05)
        second = subprocess.run([*GATEWATCH], env=env, capture_output=True, text=True,
                                timeout=60)
        assert second.returncode == 0
        assert "already running" in second.stderr
        assert first.poll() is None  # the first one keeps serving
        first.send_signal(signal.SIGTERM)
        assert first.wait(30) == 0
        assert not os.path.exists(socket_path.server_name())
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_qt_binding_keeps_python_references() -> None:
    """PySide6 6.12.0's Signal.emit() dropped a reference to True on every call; on Python
    3.11 the app then aborts after enough signals ("bool_dealloc"). pyproject excludes it."""
    import sys

    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        fired = Signal()

    emitter = Emitter()
    emitter.fired.connect(lambda: None)
    before = sys.getrefcount(True)
    for _ in range(100):
        emitter.fired.emit()
    assert sys.getrefcount(True) >= before - 5


def test_without_a_tray_the_window_opens_and_says_why(gw: GatewatchApp) -> None:
    from PySide6.QtWidgets import QSystemTrayIcon

    if QSystemTrayIcon.isSystemTrayAvailable():
        pytest.skip("this display has a system tray")
    gw.start()
    assert gw.window.isVisible()
    assert "No system tray was found" in gw.window.banner.text()
    assert gw.window.quit_on_close  # closing it quits instead of hiding into nowhere


def test_quit_with_a_question_on_screen_really_quits(gw: GatewatchApp, qtbot: QtBot) -> None:
    """Qt's quit() gives up when a window refuses to close, and the popup refuses (closing it
    means deny). Quitting must end the loop anyway, close the socket and hide the tray."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    proxy = RawProxy(qtbot)
    proxy.ask("s1-1")
    qtbot.waitUntil(gw.popup.isVisible)
    QTimer.singleShot(0, gw.tray.quit_action.trigger)
    bail = QTimer(singleShot=True, interval=5000)  # the bug: the loop keeps running
    bail.timeout.connect(lambda: QApplication.exit(99))
    bail.start()
    try:
        assert QApplication.instance().exec() == 0  # type: ignore[union-attr]
    finally:
        bail.stop()
    assert not gw.popup.isVisible() and not gw.tray.icon.isVisible()
    qtbot.waitUntil(proxy.closed_by_peer, timeout=5000)  # the proxy stops waiting for us
    assert not _serving()


def test_a_tray_click_brings_back_a_minimised_question(gw: GatewatchApp, qtbot: QtBot) -> None:
    proxy = RawProxy(qtbot)
    proxy.ask("s1-1")
    qtbot.waitUntil(gw.popup.isVisible)
    gw.popup.showMinimized()
    qtbot.waitUntil(gw.popup.isMinimized)
    gw.tray.open_requested.emit()  # a click on the tray icon
    qtbot.waitUntil(lambda: not gw.popup.isMinimized())
    assert not gw.window.isVisible()  # the question comes first, not the window


def test_the_badge_and_the_popup_count_the_same_questions(gw: GatewatchApp,
                                                          qtbot: QtBot) -> None:
    proxy = RawProxy(qtbot)
    for n, dest in enumerate(("a@x.org", "a@x.org", "b@x.org", "c@x.org")):
        proxy.ask(f"s1-{n}", destination=dest)  # the first two are identical: one question
    qtbot.waitUntil(lambda: gw.asks.queue.pending_calls() == 4)
    assert gw.popup.position.text() == "1 of 3"
    assert gw.tray._facts is not None and gw.tray._facts.pending == 3


def test_no_notification_for_the_persons_own_answer(gw: GatewatchApp, qtbot: QtBot) -> None:
    shown: list[str] = []
    gw.tray.notify = lambda title, text, critical=False: shown.append(title)  # type: ignore[method-assign]
    own = {"type": "notice", "session_id": "s1", "server": "gmail", "tool": "send_email",
           "verdict": "deny", "reason": "denied in the Gatewatch app", "decided_by": "app"}
    assert not gw.notifier.notice(own)  # an Escape in the popup is not news
    assert gw.notifier.notice({**own, "decided_by": "rules", "reason": "tainted"})
    assert shown == ["Gatewatch denied send_email on gmail"]


def test_first_run_says_what_is_unprotected_with_one_button(
    qtbot: QtBot, db_file: Path, home: Path
) -> None:
    hub = Hub("test")
    assert hub.listen()
    app = GatewatchApp(schema.connect(db_file), hub, paths.settings_path(), Settings())
    qtbot.addWidget(app.window)
    try:
        app.start()
        window = app.window
        assert window.isVisible() and window.tabs.currentWidget() is window.clients
        text = window.protect_text.text()
        assert text.endswith("clients are not protected.") and text[0].isdigit()
        assert app.tray.unprotected.text() == text.rstrip(".")
        assert app.tray.protect_action.isVisible()
        app.tray.protect_action.trigger()  # the one button: the wrap preview
        assert window.clients.preview is not None and window.clients.preview.isVisible()
        window.clients.preview.reject()
    finally:
        hub.close()
