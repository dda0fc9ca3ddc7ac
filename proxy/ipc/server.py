"""The serving end of the local socket, in asyncio, for `gatewatch approve`.

The tray app serves the same protocol with QLocalServer; this one exists for headless machines
and tests. Only one server may serve: a socket that still accepts means another is running, and
a socket file nobody accepts on is left over from a crash and is replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy import __version__
from proxy.errors import GatewatchError
from proxy.ipc import protocol
from proxy.ipc.address import existing_socket, remove_stale_socket, secure_socket_dir
from proxy.ipc.dispatch import Dispatcher, Handler
from proxy.ipc.framing import LineDecoder, encode

log = logging.getLogger(__name__)

TOUCH_EVERY_S = 30 * 60  # keeps runtime-dir cleaners from reaping the socket
PROBE_TIMEOUT_S = 2.0

# An `ask` message -> {"allow", "remember", "expires_in_s"}, or None for no answer.
Decide = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
# ("hello" | "session" | "ask" | "cancel" | "gone" | "notice" | "heartbeat", message)
OnEvent = Callable[[str, dict[str, Any]], None]


class AlreadyServing(GatewatchError, RuntimeError):
    """Another app or approver already serves the socket."""


@dataclass(eq=False)  # identity: peers live in a set
class _Peer:
    writer: asyncio.StreamWriter
    hello: dict[str, Any] = field(default_factory=dict)
    asks: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message))


class SocketServer:
    def __init__(
        self, decide: Decide, *, on_event: OnEvent | None = None, name: str = "gatewatch approve"
    ) -> None:
        self._decide = decide
        self._on_event = on_event or (lambda kind, message: None)
        self._name = name
        self._server: asyncio.base_events.Server | None = None
        self._path: Path | None = None
        self._inode: int | None = None
        self._peers: set[_Peer] = set()
        self._toucher: asyncio.Task[None] | None = None

    async def start(self) -> Path:
        """Listen on the socket; AlreadyServing if another server answers there."""
        path = secure_socket_dir(create=True)
        await _claim(path)
        old_umask = os.umask(0o177)  # the socket is born 0600, no window where others can connect
        try:
            self._server = await asyncio.start_unix_server(self._serve, str(path))
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        self._path, self._inode = path, path.stat().st_ino
        self._toucher = asyncio.get_running_loop().create_task(self._touch())
        return path

    async def close(self) -> None:
        if self._toucher is not None:
            self._toucher.cancel()
        if self._server is not None:
            self._server.close()
            for peer in list(self._peers):
                peer.writer.close()
            await self._server.wait_closed()
            self._server = None
        if self._path is not None:
            with contextlib.suppress(FileNotFoundError):
                if self._path.lstat().st_ino == self._inode:  # never remove a successor's socket
                    self._path.unlink()

    def control(self, action: protocol.ControlAction, session_id: str | None = None) -> int:
        """Send pause/resume/reload to one proxy (by session) or all; returns how many."""
        sent = 0
        for peer in self._peers:
            if session_id is None or peer.hello.get("session_id") == session_id:
                peer.send(protocol.control(action))
                sent += 1
        return sent

    async def _touch(self) -> None:
        while True:
            await asyncio.sleep(TOUCH_EVERY_S)
            if self._path is not None:
                with contextlib.suppress(OSError):
                    os.utime(self._path)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = _Peer(writer)
        self._peers.add(peer)
        decoder = LineDecoder()
        dispatcher = Dispatcher(self._handlers(peer))
        try:
            while chunk := await reader.read(65536):
                for message in decoder.feed(chunk):
                    if not dispatcher.dispatch(message):
                        return
        except (ConnectionError, asyncio.CancelledError):
            pass  # top of the handler task: a peer reset or server shutdown ends it quietly
        finally:
            self._peers.discard(peer)
            for task in peer.asks.values():
                task.cancel()  # a proxy that leaves takes its questions with it
            if peer.hello:
                self._on_event("gone", peer.hello)
            writer.close()

    def _handlers(self, peer: _Peer) -> dict[str, Handler]:
        def hello(message: dict[str, Any]) -> None:
            peer.hello = message
            peer.send(protocol.server_hello(self._name, __version__))
            self._on_event("hello", message)

        def ask(message: dict[str, Any]) -> None:
            ask_id = message["ask_id"]
            peer.asks[ask_id] = asyncio.get_running_loop().create_task(
                self._answer(peer, ask_id, message)
            )
            self._on_event("ask", message)

        def cancel(message: dict[str, Any]) -> None:
            task = peer.asks.pop(message["ask_id"], None)
            if task is not None:
                task.cancel()
                self._on_event("cancel", message)

        def session(message: dict[str, Any]) -> None:
            peer.hello.update({k: v for k, v in message.items() if k != "type"})
            self._on_event("session", message)

        def tell(kind: str) -> Handler:
            return lambda message: self._on_event(kind, message)

        return {"hello": hello, "ask": ask, "cancel": cancel, "session": session,
                "notice": tell("notice"), "heartbeat": tell("heartbeat")}

    async def _answer(self, peer: _Peer, ask_id: str, message: dict[str, Any]) -> None:
        try:
            answer = await self._decide(message)
        finally:
            peer.asks.pop(ask_id, None)
        if answer is not None:
            peer.send({"type": "decision", "ask_id": ask_id, **answer})


async def _claim(path: Path) -> None:
    """Remove a stale socket file; refuse when a live server answers on it, and refuse (leaving
    it alone) anything at the path that is not a socket (NotASocket)."""
    if not existing_socket(path):
        return
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), PROBE_TIMEOUT_S)
    except (ConnectionRefusedError, FileNotFoundError):
        log.info("replacing stale socket %s", path)
        remove_stale_socket(path)
        return
    except TimeoutError:
        pass  # a server too busy to accept is still a server
    else:
        writer.close()
    raise AlreadyServing(f"another Gatewatch app or approver already serves {path}")
