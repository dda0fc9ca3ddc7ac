"""Settling a call the relay holds because the engine said ask: the relay side of the chain.

`install(relay, ...)` creates the chain and returns the relay's asker (handed to the gate). It
builds the AskRequest, gives the chain a ClientChannel over the relay, and carries out the
outcome: forward the call (a 2026-07-28 retry without Gatewatch's fields), answer
`input_required`, deny, or say nothing at all when the client cancelled the call.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from proxy import jsonrpc
from proxy.ask.chain import AskChain, Write, without_retry_fields
from proxy.ask.channel import AskChannelError, AskChannelTimeout, Era
from proxy.ask.request import AskRequest, Outcome
from proxy.audit import AuditEvent

if TYPE_CHECKING:
    from pathlib import Path

    from proxy.ipc.client import AppLink
    from proxy.relay import HeldCall, Relay
    from proxy.settings import Settings


class HeldChannel:
    """The chain's view of the client while one call is held (see proxy.ask.channel)."""

    def __init__(self, relay: Relay, held: HeldCall) -> None:
        session = relay.session
        self.era: Era = "2026-07-28" if session.era == jsonrpc.ERA_2026 else "handshake"
        self.elicitation_modes: set[str] = set(session.elicitation_modes)
        self.client_info: dict[str, Any] | None = session.client_info
        self.cancelled: asyncio.Event = held.cancelled
        self._relay = relay

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        from proxy.relay import ClientRequestError

        try:
            result = await self._relay.request_client(method, params, timeout)
        except TimeoutError:
            raise AskChannelTimeout(f"no answer to {method} within {timeout:g} s") from None
        except ClientRequestError as exc:
            raise AskChannelError(str(exc)) from None
        if not isinstance(result, dict):
            raise AskChannelError(f"{method} answered with a non-object result")
        return result


def ask_request(held: HeldCall, client_info: dict[str, Any] | None) -> AskRequest:
    v = held.verdict
    return AskRequest(
        tool=held.tool,
        arguments=held.arguments,
        destination=v.destination,
        contract=v.contract,
        reason=v.reason,
        origin=v.origin,
        detail=dict(v.detail),
        rpc_id=held.msg.get("id"),
        client_info=client_info,
    )


class HeldAsker:
    """The relay's asker (proxy.relay.Asker): held calls go through this proxy's chain."""

    def __init__(self, relay: Relay, chain: AskChain, engine: Any = None) -> None:
        self.chain = chain
        self.settle = ask_handler(relay, chain, engine)

    def own_retry(self, params: dict[str, Any]) -> dict[str, Any] | None:
        return without_retry_fields(params) if self.chain.is_retry(params) else None


def install(
    relay: Relay,
    db_path: Path,
    settings: Settings,
    *,
    engine: Any,
    write: Write | None,
    app_link: AppLink | None,
) -> HeldAsker:
    """Create this proxy's chain; the returned asker hands it every held call."""
    from proxy.store.schema import connect

    session = relay.session
    chain = AskChain.create(
        session.server, session.id, connect(db_path), settings, write=write, app_link=app_link
    )
    if app_link is not None:
        app_link.add_control_handler(lambda message: _reload(message, relay, chain, engine))
    return HeldAsker(relay, chain, engine)


def _reload(message: dict[str, Any], relay: Relay, chain: AskChain, engine: Any) -> None:
    """`reload` from the app: settings and policy are read again; a broken file fails closed."""
    if message.get("action") != "reload":
        return
    from proxy.settings import load_settings

    try:
        chain.settings = load_settings()
        if engine is not None:
            engine.reload()
    except Exception as exc:
        print(f"gatewatch: reload failed: {exc}. Every tool call is denied until this is fixed.",
              file=sys.stderr)
        relay.gate.broken = f"Gatewatch reload failed: {exc}"
    else:
        relay.gate.broken = None


def ask_handler(
    relay: Relay, chain: AskChain, engine: Any = None
) -> Callable[[HeldCall], Awaitable[None]]:
    """`engine.remember(tool, destination)` is told about session grants, if given."""

    async def settle(held: HeldCall) -> None:
        req = ask_request(held, relay.session.client_info)
        params = held.msg.get("params")
        params = params if isinstance(params, dict) else {}
        forward: bytes | None = None
        if chain.is_retry(params):
            outcome = chain.resume(req, params)
            forward = jsonrpc.dumps({**held.msg, "params": without_retry_fields(params)}) + b"\n"
        else:
            outcome = await chain.resolve(req, HeldChannel(relay, held))
        await _carry_out(relay, held, req, outcome, forward, engine)

    return settle


async def _carry_out(
    relay: Relay,
    held: HeldCall,
    req: AskRequest,
    outcome: Outcome,
    forward: bytes | None,
    engine: Any,
) -> None:
    rpc_id = held.raw_id  # echoed exactly as the client wrote it
    detail = _detail(req, outcome)
    if outcome.input_required is not None:
        event = _event("gw2c", "response", req, outcome, "ask", detail)
        await relay.reply(rpc_id, outcome.input_required, event)
        return
    if outcome.decided_by == "cancelled":
        # The client gave up on the call: it expects no answer, and nothing goes upstream.
        await relay.record(_event("gw", "decision", req, outcome, "deny", detail))
        return
    if not outcome.allow:
        # Say what needed a human as well as why nobody approved it.
        reason = f"{req.reason}; not approved: {outcome.reason}"
        await relay.deny_call(rpc_id, req.tool, reason, decided_by=outcome.decided_by,
                              contract=req.contract, detail=detail)
        return
    if outcome.remember == "session" and engine is not None:
        for destination in req.destinations:
            engine.remember(req.tool, destination)
    await relay.record(_event("gw", "decision", req, outcome, "allow", detail))
    await relay.forward_held(held, forward)


def _detail(req: AskRequest, outcome: Outcome) -> dict[str, Any]:
    out: dict[str, Any] = {"destinations": list(req.destinations)}
    if outcome.remember is not None:
        out["remember"] = outcome.remember
    if outcome.grant_id is not None:
        out["grant_id"] = outcome.grant_id
    return out


def _event(
    direction: str,
    kind: str,
    req: AskRequest,
    outcome: Outcome,
    verdict: Literal["allow", "deny", "ask"],
    detail: dict[str, Any],
) -> AuditEvent:
    return AuditEvent(
        direction, kind, method="tools/call", rpc_id=jsonrpc.id_text(req.rpc_id), tool=req.tool,
        verdict=verdict, contract=req.contract, reason=outcome.reason,
        decided_by=outcome.decided_by, detail=detail,
    )
