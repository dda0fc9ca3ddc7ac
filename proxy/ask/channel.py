"""What the chain needs from the relay to ask the MCP client (implemented by the relay)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Protocol

from proxy.errors import GatewatchError

Era = Literal["handshake", "2026-07-28"]


class AskChannelError(GatewatchError):
    """The client answered a Gatewatch request with an error, went away, or did not answer."""


class AskChannelTimeout(AskChannelError):
    """The client did not answer before the timeout."""


class ClientChannel(Protocol):
    era: Era
    elicitation_modes: set[str]  # from initialize capabilities, or the request's _meta
    client_info: dict[str, Any] | None
    cancelled: asyncio.Event  # set when the client cancels the held call

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request to the client (id 'gw-<n>'), return its `result`.

        Raises AskChannelTimeout on timeout and AskChannelError on an error response or
        disconnect.
        """
        ...
