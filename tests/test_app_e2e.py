"""The tray app's hub and popup against real `gatewatch run` proxies asking real questions.

An mcp SDK client (on its own thread and event loop) calls send_email through `gatewatch run`
wrapping tests/upstreams/mail_server.py; the sink gate asks; the question reaches this process's
hub over the real socket; the popup answers.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.ask_controller import AskController
from app.hub import Hub
from app.popup import GUARD_MS, ApprovalPopup
from tests.support import GATEWATCH, child_env, upstream

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def ask_the_app(gw_home: Path) -> None:
    (gw_home / "config").mkdir(exist_ok=True)
    (gw_home / "config" / "settings.yaml").write_text("detector: false\nask_via: app\n")


@pytest.fixture
def asking(qtbot: QtBot) -> Iterator[AskController]:
    hub = Hub("test")
    assert hub.listen()
    popup = ApprovalPopup()
    qtbot.addWidget(popup)
    yield AskController(hub, popup, lambda: 60.0)
    hub.close()


class ClientThread(threading.Thread):
    """Runs one MCP session in the background: list tools, then the given calls in order."""

    def __init__(self, outbox: Path, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(daemon=True)
        self.outbox = outbox
        self.calls = calls
        self.results: list[tuple[bool, str]] = []
        self.error: BaseException | None = None
        self.release = threading.Event()  # the session stays open until the test sets it
        self.release.set()
        self.go = threading.Event()  # the calls start when the test sets it
        self.go.set()

    def run(self) -> None:
        try:
            asyncio.run(self._session())
        except BaseException as exc:  # reported by the test
            self.error = exc

    async def _session(self) -> None:
        from mcp import Client, StdioServerParameters

        argv = [*GATEWATCH, "run", "--name", "mail", "--", *upstream("mail_server")]
        params = StdioServerParameters(command=argv[0], args=argv[1:],
                                       env=child_env({"MAIL_OUTBOX": str(self.outbox)}))
        async with Client(params, mode="legacy") as client:
            await client.list_tools()
            await asyncio.to_thread(self.go.wait, 60)
            for tool, args in self.calls:
                result = await client.call_tool(tool, args)
                text = "".join(getattr(block, "text", "") for block in result.content)
                self.results.append((bool(result.is_error), text))
            await asyncio.to_thread(self.release.wait, 60)


def sent(outbox: Path) -> list[dict[str, Any]]:
    if not outbox.exists():
        return []
    return [json.loads(line) for line in outbox.read_text().splitlines() if line]


def test_allow_in_the_popup_lets_the_real_call_through(
    asking: AskController, qtbot: QtBot, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.jsonl"
    client = ClientThread(outbox, [
        ("send_email", {"to": ["new@random.com"], "subject": "Hi", "body": "Hello"}),
        ("send_email", {"to": ["new@random.com"], "subject": "Again", "body": "Hello"}),
    ])
    client.start()
    popup = asking.popup
    qtbot.waitUntil(popup.isVisible, timeout=60000)
    assert popup.headline.text() == "send_email on mail wants to send to new@random.com"
    popup.remember_session.setChecked(True)
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.allow_button.click()
    client.join(60)
    assert client.error is None, client.error
    # The second call is covered by the session grant: no second question.
    assert [r[0] for r in client.results] == [False, False]
    assert [m["subject"] for m in sent(outbox)] == ["Hi", "Again"]


def test_escape_in_the_popup_denies_and_nothing_is_sent(
    asking: AskController, qtbot: QtBot, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.jsonl"
    client = ClientThread(outbox, [("send_email", {"to": ["x@evil.example"], "subject": "S",
                                                   "body": "B"})])
    client.start()
    qtbot.waitUntil(asking.popup.isVisible, timeout=60000)
    qtbot.waitUntil(asking.popup.keys_accepted, timeout=GUARD_MS * 4)  # not a typing tail
    qtbot.keyClick(asking.popup, "\x1b")  # Escape
    client.join(60)
    assert client.error is None, client.error
    assert client.results and client.results[0][0] is True
    assert sent(outbox) == []


def test_a_proxy_that_exits_takes_its_question_away(
    asking: AskController, qtbot: QtBot, tmp_path: Path
) -> None:
    client = ClientThread(tmp_path / "outbox.jsonl",
                          [("send_email", {"to": ["q@random.com"], "subject": "S", "body": "B"})])
    client.start()
    qtbot.waitUntil(asking.popup.isVisible, timeout=60000)
    proxies = asking.hub.proxies()
    assert len(proxies) == 1 and proxies[0].pid
    import os
    import signal

    os.kill(proxies[0].pid, signal.SIGTERM)
    qtbot.waitUntil(lambda: not asking.popup.isVisible(), timeout=30000)
    assert len(asking.queue) == 0
    client.join(60)


def test_a_running_proxy_shows_in_the_servers_tab(asking: AskController, qtbot: QtBot,
                                                 tmp_path: Path, db_file: Path) -> None:
    from app.servers_tab import ServersTab
    from proxy.store import schema

    tab = ServersTab(schema.connect(db_file), asking.hub)
    qtbot.addWidget(tab)
    client = ClientThread(tmp_path / "outbox.jsonl", [("read_inbox", {})])
    client.release.clear()
    client.start()
    try:
        def cell(column: int) -> str:
            item = tab.proxies.item(0, column) if tab.proxies.rowCount() == 1 else None
            return item.text() if item is not None else ""

        # The client's name arrives in a `session` message once it has initialised.
        qtbot.waitUntil(lambda: cell(1) not in ("", "—"), timeout=60000)
        assert cell(0) == "mail"
        qtbot.waitUntil(lambda: cell(4) == "1", timeout=20000)  # calls, from heartbeats
    finally:
        client.release.set()
        client.join(60)
    qtbot.waitUntil(lambda: tab.proxies.rowCount() == 0, timeout=20000)


def test_pausing_a_server_in_the_app_denies_its_calls(asking: AskController, qtbot: QtBot,
                                                     tmp_path: Path, db_file: Path) -> None:
    from app.servers_tab import ServersTab
    from proxy.store import schema

    tab = ServersTab(schema.connect(db_file), asking.hub)
    qtbot.addWidget(tab)
    client = ClientThread(tmp_path / "outbox.jsonl", [("read_inbox", {})])
    client.go.clear()
    client.start()
    qtbot.waitUntil(lambda: tab.proxies.rowCount() == 1, timeout=60000)
    tab.proxies.selectRow(0)
    tab.pause_button.click()
    # The proxy reports its state in its next heartbeat.
    qtbot.waitUntil(lambda: asking.hub.proxies()[0].paused, timeout=20000)
    client.go.set()
    client.join(60)
    assert client.error is None, client.error
    assert client.results[0][0] is True
    assert "paused" in client.results[0][1]


def test_always_allow_becomes_a_trusted_destination(asking: AskController, qtbot: QtBot,
                                                    tmp_path: Path, db_file: Path) -> None:
    from app import store
    from app.trust_tab import TrustTab
    from proxy.store import schema

    outbox = tmp_path / "outbox.jsonl"
    client = ClientThread(outbox, [("send_email", {"to": ["friend@example.com"],
                                                   "subject": "S", "body": "B"})])
    client.start()
    popup = asking.popup
    qtbot.waitUntil(popup.isVisible, timeout=60000)
    popup.remember_forever.setChecked(True)
    popup.expiry.setCurrentIndex(2)  # for 1 day
    qtbot.waitUntil(popup.allow_button.isEnabled, timeout=GUARD_MS * 4)
    popup.allow_button.click()
    client.join(60)
    assert client.error is None, client.error
    assert [m["to"] for m in sent(outbox)] == [["friend@example.com"]]
    conn = schema.connect(db_file)
    qtbot.waitUntil(lambda: bool(store.grants(conn)), timeout=10000)
    [grant] = store.grants(conn)
    assert (grant.server, grant.tool, grant.destination) == ("mail", "send_email",
                                                             "friend@example.com")
    assert grant.expires_at is not None
    tab = TrustTab(conn)
    qtbot.addWidget(tab)
    assert tab.table.rowCount() == 1
