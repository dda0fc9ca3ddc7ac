"""Which handler a message from a peer goes to, for both ends of the local-socket protocol:
the tray app's hub (Qt) and `gatewatch approve`'s SocketServer (asyncio) read their proxies
through a Dispatcher, and a proxy's AppLink reads the app through one, so a malformed or
unknown message is treated the same everywhere.

The rules (docs/ipc.md): the first message is `hello`, in a protocol we speak, or the peer is
closed; after it, each message goes to the handler of its `type`. Unknown types, a second
`hello` and messages without the fields their type needs are ignored (and logged), and the
connection stays up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from proxy.ipc import protocol

log = logging.getLogger(__name__)

Message = dict[str, Any]
Handler = Callable[[Message], None]

# The fields a message type needs before a handler sees it, with their type.
REQUIRED: dict[str, dict[str, type]] = {
    "ask": {"ask_id": str},
    "cancel": {"ask_id": str},
    "decision": {"ask_id": str},
}


class Dispatcher:
    """One peer's messages, in order. `handlers` maps a message type to what to do with it;
    `hello` is called once, with the peer's valid hello."""

    def __init__(self, handlers: Mapping[str, Handler]) -> None:
        self._handlers = handlers
        self.hello: Message | None = None

    def dispatch(self, message: Message) -> bool:
        """Handle one message (a dict with a string `type`, as LineDecoder yields them).
        False: the peer must be closed."""
        kind = message["type"]
        if self.hello is None:
            if kind != "hello":
                log.warning("closing a peer whose first message is %r, not hello", kind)
                return False
            if not protocol.speaks_our_protocol(message):
                log.warning("closing a peer that speaks protocol %r", message.get("protocol"))
                return False
            self.hello = message
            kind = "hello"
        elif kind == "hello":
            log.warning("ignoring a second hello")
            return True
        missing = [name for name, want in REQUIRED.get(kind, {}).items()
                   if not isinstance(message.get(name), want)]
        if missing:
            log.warning("ignoring a %r message without %s", kind, ", ".join(missing))
            return True
        handler = self._handlers.get(kind)
        if handler is None:
            log.debug("ignoring a message of unknown type %r", kind)
            return True
        handler(message)
        return True
