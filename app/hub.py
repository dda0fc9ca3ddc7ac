"""The hub: the app's end of the local socket. One connection per proxy, line-framed JSON.

Only transport and bookkeeping of who is connected; questions, popups and the database are
other modules' jobs (they listen to the signals).
"""

from __future__ import annotations

import enum
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app import socket_path
from app.live_proxies import LiveProxy
from proxy.errors import GatewatchError
from proxy.ipc import protocol
from proxy.ipc.dispatch import Dispatcher, Handler
from proxy.ipc.framing import LineDecoder, encode

log = logging.getLogger(__name__)

HEARTBEAT_MS = 5_000
TOUCH_MS = 30 * 60 * 1000


class HubError(GatewatchError, RuntimeError):
    """The socket could not be served; the message says why."""


class _Link:
    """One accepted connection and what it has told us."""

    def __init__(
        self, sock: QLocalSocket, handlers: Callable[[_Link], dict[str, Handler]]
    ) -> None:
        self.sock = sock
        self.decoder = LineDecoder()
        self.proxy: LiveProxy | None = None
        self.asks: set[str] = set()  # what it asked: a proxy may cancel only its own questions
        self.dispatcher = Dispatcher(handlers(self))


class Hub(QObject):
    proxies_changed = Signal()
    proxy_joined = Signal(object)  # LiveProxy, right after its hello
    asked = Signal(dict)  # an `ask` message
    cancelled = Signal(str, str, str)  # session_id, ask_id, reason
    proxy_left = Signal(str)  # session_id: its questions are void
    noticed = Signal(dict)  # a `notice` message
    show_requested = Signal()  # a second launch wants the window

    def __init__(self, version: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._version = version
        self._server = QLocalServer(self)
        self._server.newConnection.connect(self._accept)
        self._links: list[_Link] = []
        self._heartbeat = QTimer(self, interval=HEARTBEAT_MS)
        self._heartbeat.timeout.connect(lambda: self.broadcast(protocol.heartbeat()))
        self._touch = QTimer(self, interval=TOUCH_MS)
        self._touch.timeout.connect(self._touch_socket)

    # -- serving ------------------------------------------------------------------------------

    def listen(self) -> bool:
        """Serve the socket. False when another server already does (then do not serve)."""
        socket_path.prepare()
        if socket_path.someone_serves():
            return False
        name = socket_path.server_name()
        if sys.platform != "win32":
            # Born 0600: UserAccessOption would break address-in-use detection (QTBUG-48635).
            old_umask = os.umask(0o177)
        try:
            listening = self._server.listen(name)
        finally:
            if sys.platform != "win32":
                os.umask(old_umask)
        if not listening:
            # Lost a race with another starting app, or a file that is not ours.
            if socket_path.someone_serves():
                return False
            raise HubError(f"cannot listen on {name}: {self._server.errorString()}")
        if sys.platform != "win32":
            os.chmod(name, 0o600)  # belt and braces on platforms that ignore the umask
        self._heartbeat.start()
        self._touch.start()
        log.info("serving %s", name)
        return True

    def close(self) -> None:
        self._heartbeat.stop()
        self._touch.stop()
        links, self._links = self._links, []
        for link in links:
            link.sock.disconnected.disconnect()  # closing is not a proxy leaving
            link.sock.abort()
        self._server.close()

    def _touch_socket(self) -> None:
        # Runtime-dir cleaners remove files with an old access time.
        if sys.platform != "win32":
            try:
                os.utime(socket_path.server_name())
            except OSError as exc:
                log.warning("cannot touch the socket: %s", exc)

    # -- who is connected ---------------------------------------------------------------------

    def proxies(self) -> list[LiveProxy]:
        return [link.proxy for link in self._links if link.proxy is not None]

    def send(self, session_id: str, message: dict[str, Any]) -> bool:
        for link in self._links:
            if link.proxy is not None and link.proxy.session_id == session_id:
                link.sock.write(encode(message))
                link.sock.flush()
                return True
        return False

    def broadcast(self, message: dict[str, Any], server: str | None = None) -> int:
        """Send to every proxy (or every proxy of one server); how many got it."""
        count = 0
        data = encode(message)
        for link in self._links:
            if link.proxy is not None and (server is None or link.proxy.server == server):
                link.sock.write(data)
                link.sock.flush()
                count += 1
        return count

    # -- connections --------------------------------------------------------------------------

    def _accept(self) -> None:
        while (sock := self._server.nextPendingConnection()) is not None:
            link = _Link(sock, self._handlers)
            self._links.append(link)
            sock.readyRead.connect(lambda link=link: self._read(link))
            sock.disconnected.connect(lambda link=link: self._drop(link))
            sock.write(encode(protocol.server_hello("Gatewatch", self._version)))
            sock.flush()

    def _read(self, link: _Link) -> None:
        for message in link.decoder.feed(bytes(link.sock.readAll().data())):
            if link not in self._links:
                return
            if not link.dispatcher.dispatch(message):
                link.sock.disconnectFromServer()
                return

    def _handlers(self, link: _Link) -> dict[str, Handler]:
        """What each message does; only a proxy (not a launcher) has a session to speak for."""

        def hello(msg: dict[str, Any]) -> None:
            if msg.get("role") == "proxy":
                link.proxy = LiveProxy.from_hello(msg)
                self.proxy_joined.emit(link.proxy)
                self.proxies_changed.emit()

        def show(msg: dict[str, Any]) -> None:
            self.show_requested.emit()
            link.sock.disconnectFromServer()  # tells the launcher it was heard

        def from_proxy(handle: Callable[[LiveProxy, dict[str, Any]], None]) -> Handler:
            return lambda msg: handle(link.proxy, msg) if link.proxy is not None else None

        def update(proxy: LiveProxy, msg: dict[str, Any]) -> None:
            proxy.update(msg)
            self.proxies_changed.emit()

        def ask(proxy: LiveProxy, msg: dict[str, Any]) -> None:
            link.asks.add(msg["ask_id"])
            # A proxy only asks about its own session.
            self.asked.emit({**msg, "session_id": proxy.session_id})

        def cancel(proxy: LiveProxy, msg: dict[str, Any]) -> None:
            if msg["ask_id"] in link.asks:
                link.asks.discard(msg["ask_id"])
                self.cancelled.emit(proxy.session_id, msg["ask_id"],
                                    str(msg.get("reason") or "cancelled"))

        return {
            "hello": hello,
            "show": show,
            "session": from_proxy(update),
            "heartbeat": from_proxy(update),
            "ask": from_proxy(ask),
            "cancel": from_proxy(cancel),
            "notice": from_proxy(lambda p, msg: self.noticed.emit(msg)),
        }

    def _drop(self, link: _Link) -> None:
        if link not in self._links:
            return
        self._links.remove(link)
        if shiboken6.isValid(link.sock):  # at exit Qt may have deleted it already
            link.sock.deleteLater()
        if link.proxy is not None:
            self.proxy_left.emit(link.proxy.session_id)
            self.proxies_changed.emit()


class Wake(enum.Enum):
    WOKEN = "woken"  # the running app read the request and hung up
    SILENT = "silent"  # something accepted the connection but never answered
    ABSENT = "absent"  # nothing accepted the connection


def wake_running_app(timeout_ms: int = 10_000) -> Wake:
    """Ask the app that serves the socket to bring its window forward.

    The app listens before it opens its database and builds its window, so a launch while it
    is still starting (or busy on a loaded machine) waits for its loop; hence the long wait.
    """
    sock = QLocalSocket()
    sock.connectToServer(socket_path.server_name())
    if not sock.waitForConnected(timeout_ms):
        return Wake.ABSENT
    sock.write(encode({"type": "hello", "protocol": protocol.PROTOCOL_VERSION, "role": "launcher"}))
    sock.write(encode({"type": "show"}))
    sock.waitForBytesWritten(timeout_ms)
    # The app hangs up once it has read the request; that is the acknowledgement.
    heard = sock.state() == QLocalSocket.LocalSocketState.UnconnectedState or (
        sock.waitForDisconnected(timeout_ms)
    )
    sock.abort()
    return Wake.WOKEN if heard else Wake.SILENT
