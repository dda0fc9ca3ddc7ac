"""The ask chain: remembered trust, client elicitation (both eras), the app, then deny."""

from proxy.ask.chain import AskChain, without_retry_fields
from proxy.ask.channel import AskChannelError, AskChannelTimeout, ClientChannel
from proxy.ask.request import AskRequest, Outcome

__all__ = [
    "AskChain",
    "AskChannelError",
    "AskChannelTimeout",
    "AskRequest",
    "ClientChannel",
    "Outcome",
    "without_retry_fields",
]
