"""AppLink: a proxy's link to the app (or `gatewatch approve`) over the local socket.

It connects in the background and keeps retrying, so an app started after the proxy still
gets it. Nothing here ever waits on the app from the proxy's hot path: when no app is there,
`ask()` returns None at once and everything else is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from typing import Any

from proxy.ipc import protocol
from proxy.ipc.address import SocketDirError, secure_socket_dir
from proxy.ipc.dispatch import Dispatcher
from proxy.ipc.framing import LineDecoder, encode

log = logging.getLogger(__name__)

RECONNECT_S = 1.0
HELLO_TIMEOUT_S = 5.0
# A peer that stops reading must not make the proxy buffer without bound.
MAX_WRITE_BUFFER = 4 * 1024 * 1024


class AppLink:
    """The asyncio client of the local socket. Create it, `start()` it, `await close()` it."""

    def __init__(
        self,
        hello: dict[str, Any],
        *,
        on_control: Callable[[dict[str, Any]], None] | None = None,
        stats: Callable[[], dict[str, Any]] | None = None,
        reconnect_s: float = RECONNECT_S,
        heartbeat_s: float = protocol.HEARTBEAT_S,
    ) -> None:
        self._hello = dict(hello)
        self._control_handlers = [on_control] if on_control is not None else []
        self._stats = stats
        self._reconnect_s = reconnect_s
        self._heartbeat_s = heartbeat_s
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._warned_dir = False

    def add_control_handler(self, handler: Callable[[dict[str, Any]], None]) -> None:
        """Also call `handler` with every `control` message (pause, resume, reload)."""
        self._control_handlers.append(handler)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def start(self) -> None:
        if sys.platform == "win32":
            return  # the named-pipe client is not written yet: the chain goes on without the app
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="app-link")

    async def wait_connected(self, timeout: float) -> bool:
        """For callers that can afford to wait (tests, the CLI); the proxy never does."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._connected.wait(), timeout)
        return self.connected

    async def close(self) -> None:
        if self._writer is not None:
            for ask_id in list(self._pending):
                self._send(protocol.cancel(ask_id, "proxy_exit"))
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self._writer.drain()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def update_session(self, **fields: Any) -> None:
        """Client, era or can_elicit became known: remember them for the next hello, and tell."""
        self._hello.update(fields)
        self._send({"type": "session", "session_id": self._hello.get("session_id"), **fields})

    def notice(self, message: dict[str, Any]) -> None:
        self._send({"type": "notice", "session_id": self._hello.get("session_id"), **message})

    async def ask(self, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Send an `ask` and wait for its `decision`.

        None when no app is connected, the link drops before an answer, or `timeout` passes
        (then the app is told to drop the question). Cancelling the caller cancels the question.
        """
        if not self.connected:
            return None
        ask_id = str(message["ask_id"])
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._pending[ask_id] = future
        try:
            self._send({"type": "ask", **message})
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self._send(protocol.cancel(ask_id, "timeout"))
            return None
        except asyncio.CancelledError:
            if ask_id in self._pending:  # not already voided by cancel()
                self._send(protocol.cancel(ask_id, "cancelled"))
            raise
        finally:
            self._pending.pop(ask_id, None)

    def cancel(self, ask_id: str) -> None:
        """The held call was cancelled: void the question (its `ask()` returns None)."""
        future = self._pending.pop(ask_id, None)
        if future is not None:
            self._send(protocol.cancel(ask_id, "cancelled"))
            if not future.done():
                future.set_result(None)

    # -- connection ------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self._session()
            except (OSError, SocketDirError, asyncio.IncompleteReadError) as exc:
                log.debug("app link: %s", exc)
            finally:
                self._disconnected()
            await asyncio.sleep(self._reconnect_s)

    async def _session(self) -> None:
        try:
            path = secure_socket_dir(create=False)
        except SocketDirError as exc:
            # A missing directory just means no app yet; a shared one is worth one warning.
            if not self._warned_dir and "does not exist" not in str(exc):
                self._warned_dir = True
                log.warning("not connecting to the Gatewatch app: %s", exc)
            return
        reader, writer = await asyncio.open_unix_connection(str(path))
        self._writer = writer
        try:
            sent = dict(self._hello)
            writer.write(encode(sent))
            decoder = LineDecoder()
            dispatcher = Dispatcher({"hello": lambda message: None,
                                     "decision": self._decided, "control": self._control})
            if not await asyncio.wait_for(self._greeted(reader, decoder, dispatcher),
                                          HELLO_TIMEOUT_S):
                return
            self._connected.set()
            changed = {k: v for k, v in self._hello.items() if sent.get(k) != v}
            if changed:  # learnt while the app had not answered yet: that update was not sent
                self.update_session(**changed)
            beat = asyncio.get_running_loop().create_task(self._heartbeats())
            try:
                while chunk := await reader.read(65536):
                    for message in decoder.feed(chunk):
                        dispatcher.dispatch(message)  # past hello: never asks to close
            finally:
                beat.cancel()
        finally:
            writer.close()

    @staticmethod
    async def _greeted(
        reader: asyncio.StreamReader, decoder: LineDecoder, dispatcher: Dispatcher
    ) -> bool:
        """Read until the app's hello (and whatever came with it); False: leave this peer."""
        while dispatcher.hello is None:
            chunk = await reader.read(65536)
            if not chunk:
                return False
            for message in decoder.feed(chunk):
                if not dispatcher.dispatch(message):
                    return False
        return True

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s)
            stats = self._stats() if self._stats else {}
            self._send(protocol.heartbeat(session_id=self._hello.get("session_id"), **stats))

    def _decided(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["ask_id"])
        if future is not None and not future.done():
            future.set_result(message)

    def _control(self, message: dict[str, Any]) -> None:
        for handler in self._control_handlers:
            try:
                handler(message)
            except Exception:
                log.exception("app link: control handler failed on %r", message)

    def _disconnected(self) -> None:
        self._connected.clear()
        self._writer = None
        for future in self._pending.values():
            if not future.done():
                future.set_result(None)

    def _send(self, message: dict[str, Any]) -> None:
        writer = self._writer
        if writer is None or not self.connected or writer.is_closing():
            return
        if writer.transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
            log.warning("app link: app is not reading; dropped a %s", message.get("type"))
            return
        writer.write(encode(message))
