"""Settling a call the relay holds because the engine said ask: the relay side of the chain.

`install(relay, ...)` creates the chain and returns the relay's asker (handed to the gate). It
builds the AskRequest, gives the chain a ClientChannel over the relay, and carries out the
outcome: forward the call (a 2026-07-28 retry without Gatewatch's fields), answer
`input_required`, deny, or say nothing at all when the client cancelled the call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from proxy import jsonrpc
from proxy.ask.chain import PINNING, AskChain, Retry, without_retry_fields
from proxy.ask.channel import AskChannelError, AskChannelTimeout, Era
from proxy.ask.request import AskRequest, Outcome
from proxy.audit import AuditEvent

if TYPE_CHECKING:
    from pathlib import Path

    from proxy.decision import Decision, Verdict
    from proxy.ipc.client import AppLink
    from proxy.relay import HeldCall, Relay
    from proxy.settings import Settings
    from proxy.store.database import Write

log = logging.getLogger(__name__)

# A pin question, then a destination question: more than this on one call is a loop.
MAX_QUESTIONS = 4


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


def ask_request(
    held: HeldCall, client_info: dict[str, Any] | None, verdict: Decision | None = None
) -> AskRequest:
    """The question a held call asks: its first verdict's, or a later one's (`verdict`)."""
    return AskRequest(held.tool, held.arguments, verdict or held.verdict,
                      rpc_id=held.msg.get("id"), client_info=client_info)


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
    from proxy.store.database import Database

    session = relay.session
    chain = AskChain.create(
        session.server, session.id, Database.open(db_path, write=write), settings,
        app_link=app_link,
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
        log.error("reload failed: %s. Every tool call is denied until this is fixed.", exc)
        relay.gate.broken = f"Gatewatch reload failed: {exc}"
    else:
        relay.gate.broken = None


def ask_handler(
    relay: Relay, chain: AskChain, engine: Any = None
) -> Callable[[HeldCall], Awaitable[None]]:
    """The coroutine that settles a held call. With an `engine`, a tool approval is stored
    through `engine.approve_tool` and the call is decided again (so a pin approval never
    approves a destination); `engine.remember(tool, destination)` is told of session grants."""

    async def settle(held: HeldCall) -> None:
        req = ask_request(held, relay.session.client_info)
        params = held.msg.get("params")
        params = params if isinstance(params, dict) else {}
        forward: bytes | None = None
        retry: Retry | None = None
        if chain.is_retry(params):
            retry = chain.open_retry(req, params)
            forward = jsonrpc.dumps({**held.msg, "params": without_retry_fields(params)}) + b"\n"
        approved: list[str] = list(retry.sealed.approved_pins) if retry and retry.sealed else []
        for _ in range(MAX_QUESTIONS):
            outcome = chain.answer_retry(req, retry) if retry is not None else None
            if outcome is None:
                outcome = await chain.resolve(req, HeldChannel(relay, held), tuple(approved))
            if not (outcome.allow and req.contract == PINNING and engine is not None):
                break
            # The tool is approved, not the call: every later contract runs on it now.
            verdict = await _approve_tool(relay, held, req, outcome, engine)
            if verdict is None:
                outcome = Outcome(False, outcome.decided_by,
                                  "the tool changed again while the human was asked")
                break
            approved.append(str(req.detail.get("digest", "")))
            if verdict.verdict == "allow":
                await relay.forward_held(held, forward)
                return
            if verdict.verdict == "deny":
                await relay.deny_call(held.msg.get("id"), held.tool, verdict.reason,
                                      decided_by="rules", contract=verdict.contract,
                                      detail=verdict.audit_detail())
                return
            req = ask_request(held, relay.session.client_info, verdict)
        else:
            outcome = Outcome(False, "fallback", "too many questions for one call")
        await _carry_out(relay, held, req, outcome, forward, engine)

    return settle


async def _approve_tool(
    relay: Relay, held: HeldCall, req: AskRequest, outcome: Outcome, engine: Any
) -> Decision | None:
    """Store the pin approval through the engine (once / session / forever, as the human
    chose), audit it, and decide the same call again. None if the tool changed meanwhile."""
    digest = req.detail.get("digest")
    if not engine.approve_tool(req.tool, outcome.remember or "once",
                               digest if isinstance(digest, str) else None, held.arguments):
        return None
    # Decided before any await: a once approval must not be taken by another call meanwhile.
    verdict = relay.gate.decide(held.tool, held.arguments)
    await relay.record(_event("gw", "decision", req, outcome, "allow", _detail(req, outcome)))
    await relay.record(AuditEvent(
        "gw", "decision", method="tools/call", rpc_id=jsonrpc.id_text(req.rpc_id),
        tool=req.tool, verdict=verdict.verdict, contract=verdict.contract,
        reason=f"after the tool approval: {verdict.reason}", decided_by="rules",
        detail=verdict.audit_detail(),
    ))
    return verdict


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
    verdict: Verdict,
    detail: dict[str, Any],
) -> AuditEvent:
    return AuditEvent(
        direction, kind, method="tools/call", rpc_id=jsonrpc.id_text(req.rpc_id), tool=req.tool,
        verdict=verdict, contract=req.contract, reason=outcome.reason,
        decided_by=outcome.decided_by, detail=detail,
    )
