"""The relay: raw JSON-RPC lines between the client and the upstream, decided frame by frame.

- `core`: what to do with each frame (a plain object fed lines, returning actions)
- `strict`: the strict parser every frame passes before anything else
- `loose`: a forgiving read of a refused frame, to answer it with its own id
- `messages`: the messages Gatewatch writes, ids echoed exactly
- `actions`: what the core asks for; `pumps`: the asyncio shell that carries it out
- `framing`: newline-delimited frames from a byte stream, oversize lines in bounded pieces
"""

from proxy.relay.actions import Asker, HeldCall, Hooks
from proxy.relay.core import MAX_PARSE, RelayCore
from proxy.relay.pumps import ClientRequestError, Relay

__all__ = ["MAX_PARSE", "Asker", "ClientRequestError", "HeldCall", "Hooks", "Relay", "RelayCore"]
