"""What the relay core asks its shell to do. The core never touches a stream itself."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from proxy.relay.messages import RawId

if TYPE_CHECKING:
    from proxy.audit import AuditEvent
    from proxy.decision import Decision


@dataclass(slots=True)
class ToServer:
    data: bytes


@dataclass(slots=True)
class ToClient:
    data: bytes


@dataclass(slots=True)
class Record:
    """Queue an audit event (written off the hot path; the audit layer redacts)."""

    event: AuditEvent


@dataclass(slots=True)
class HeldCall:
    """A tools/call Gatewatch holds while a human is asked."""

    msg: dict[str, Any]
    data: bytes
    raw_id: RawId
    tool: str
    arguments: dict[str, Any]
    verdict: Decision
    cancelled: asyncio.Event


@dataclass(slots=True)
class Hold:
    """Settle this call through the asker, in the background."""

    held: HeldCall


@dataclass(slots=True)
class Answered:
    """The client answered a request Gatewatch sent it (`error` set when it failed)."""

    rpc_id: str
    result: Any
    error: Any = None


@dataclass(slots=True)
class Timer:
    """Call `fire` after `delay` seconds and carry out the actions it returns."""

    delay: float
    fire: Callable[[], list[Action]]


Action = ToServer | ToClient | Record | Hold | Answered | Timer


class Asker(Protocol):
    """The ask chain as the relay sees it (given to the gate once the components loaded)."""

    def settle(self, held: HeldCall) -> Awaitable[None]:
        """Decide a held call and carry out the outcome through the relay."""
        ...

    def own_retry(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """For a 2026-07-28 retry of Gatewatch's own input_required: the params without
        Gatewatch's fields (what the upstream must see); otherwise None."""
        ...


def _nothing(*_: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the relay tells the rest of the proxy, fixed at construction."""

    session_changed: Callable[[], None] = _nothing  # client info or protocol version changed
    notice: Callable[[AuditEvent], None] = _nothing  # a denied call or a blocked result
