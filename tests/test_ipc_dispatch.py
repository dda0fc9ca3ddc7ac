"""One dispatcher of the socket protocol (proxy.ipc.dispatch) for both of its servers: the
tray app's hub and `gatewatch approve`'s SocketServer treat a peer that skips hello, an unknown
type and a malformed message the same way. The same raw peer talks to each, on the real socket."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from proxy.ipc.address import socket_path
from proxy.ipc.dispatch import Dispatcher

HELLO = {"type": "hello", "protocol": 1, "role": "proxy", "session_id": "s1", "server": "gmail",
         "pid": 4242, "command": ["npx", "srv"], "started_at": 1.0, "client": None,
         "era": None, "can_elicit": None}


def ask(ask_id: Any) -> dict[str, Any]:
    return {"type": "ask", "ask_id": ask_id, "session_id": "s1", "server": "gmail",
            "tool": "send_email", "destination": "new@random.example", "arguments_preview": "{}",
            "arguments_digest": "d", "contract": "sink_gate", "reason": "unproven",
            "origin": None, "client": None, "deadline_s": 100, "created_at": 1.0}


class Side:
    """A server of the protocol, as a test sees it: which asks and cancels it took."""

    asked: list[str]
    cancelled: list[str]
    wait: Callable[[Callable[[], bool]], None]


class AppSide(Side):
    def __init__(self, qtbot: Any) -> None:
        from app.hub import Hub

        self.asked, self.cancelled = [], []
        self.hub = Hub("test")
        assert self.hub.listen()
        self.hub.asked.connect(lambda msg: self.asked.append(msg["ask_id"]))
        self.hub.cancelled.connect(lambda session, ask_id, why: self.cancelled.append(ask_id))
        self.wait = lambda done: qtbot.waitUntil(done, timeout=5000)

    def close(self) -> None:
        self.hub.close()


class ApproveSide(Side):
    def __init__(self) -> None:
        from proxy.ipc.server import SocketServer

        self.asked, self.cancelled = [], []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def never_answer(message: dict[str, Any]) -> dict[str, Any] | None:
            await asyncio.Event().wait()
            return None

        def seen(kind: str, message: dict[str, Any]) -> None:
            if kind == "ask":
                self.asked.append(message["ask_id"])
            elif kind == "cancel":
                self.cancelled.append(message["ask_id"])

        self.server = SocketServer(never_answer, on_event=seen)
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        self.wait = _poll

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _poll(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not done():
        assert time.monotonic() < deadline, "the condition did not come true within 5 s"
        time.sleep(0.01)


class Peer:
    """A proxy written with a plain socket."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(socket_path()))
        self.sock.setblocking(False)
        self.eof = False

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        self.sock.sendall(b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n"
                                   for m in messages))

    def closed(self) -> bool:
        try:
            while self.sock.recv(65536):
                pass
            self.eof = True
        except BlockingIOError:
            pass
        return self.eof


@pytest.fixture(params=["app", "approve"])
def side(request: pytest.FixtureRequest) -> Iterator[Side]:
    server: AppSide | ApproveSide = (AppSide(request.getfixturevalue("qtbot"))
                                     if request.param == "app" else ApproveSide())
    yield server
    server.close()


@pytest.mark.parametrize("first", [ask("a-1"), {**HELLO, "protocol": 2}, {"type": "heartbeat"}])
def test_a_peer_that_does_not_open_with_our_hello_is_closed(
    side: Side, first: dict[str, Any]
) -> None:
    peer = Peer()
    peer.send(first, ask("a-2"))
    side.wait(peer.closed)
    assert side.asked == []


def test_unknown_and_malformed_messages_are_ignored_and_the_link_stays(side: Side) -> None:
    peer = Peer()
    peer.send(HELLO, b"not json\n", b"[1]\n", {"type": "bogus", "ask_id": "x"},
              {"type": "decision", "ask_id": "x", "allow": True},
              ask(None), ask(7), {**ask("a-0"), "type": "ASK"}, {"type": "cancel"},
              {**HELLO, "session_id": "other"}, ask("a-1"))
    side.wait(lambda: side.asked == ["a-1"])
    peer.send({"type": "cancel", "ask_id": 1}, {"type": "cancel", "ask_id": "a-1"})
    side.wait(lambda: side.cancelled == ["a-1"])
    assert side.asked == ["a-1"] and not peer.closed()


def test_a_peer_cancels_only_its_own_questions(side: Side) -> None:
    mine, other = Peer(), Peer()
    mine.send(HELLO, ask("mine-1"))
    other.send({**HELLO, "session_id": "s2"})
    side.wait(lambda: side.asked == ["mine-1"])
    other.send({"type": "cancel", "ask_id": "mine-1"}, ask("other-1"))
    side.wait(lambda: side.asked == ["mine-1", "other-1"])
    assert side.cancelled == []  # read before other-1, on the same connection: it did nothing
    mine.send({"type": "cancel", "ask_id": "mine-1"})
    side.wait(lambda: side.cancelled == ["mine-1"])


# -- the dispatcher alone -----------------------------------------------------------------------


def test_each_type_reaches_its_handler_after_hello_only() -> None:
    got: list[tuple[str, Any]] = []
    dispatcher = Dispatcher({
        "hello": lambda m: got.append(("hello", m["role"])),
        "ask": lambda m: got.append(("ask", m["ask_id"])),
    })
    assert dispatcher.dispatch(HELLO)
    assert dispatcher.dispatch(ask("a-1"))
    assert dispatcher.dispatch({"type": "notice"})  # no handler: ignored, link kept
    assert dispatcher.dispatch({**HELLO, "role": "app"})  # a second hello: ignored
    assert got == [("hello", "proxy"), ("ask", "a-1")]
    assert dispatcher.hello == HELLO


def test_nothing_is_handled_before_hello() -> None:
    got: list[dict[str, Any]] = []
    dispatcher = Dispatcher({"ask": got.append, "hello": got.append})
    assert not dispatcher.dispatch(ask("a-1"))
    assert not Dispatcher({"hello": got.append}).dispatch({**HELLO, "protocol": "1"})
    assert got == [] and dispatcher.hello is None
