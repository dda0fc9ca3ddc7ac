"""The ask chain: who answers a call the engine could not decide, in order, failing closed.

remembered trust → MCP elicitation (when the client can) → the app over the local socket (when
one is connected) → deny. `ask_via` in settings narrows the middle steps. Every outcome says
which step decided (`decided_by`); steps that were tried and fell through are audited as events
of kind `ask_step` (through the store's `write`: the proxy's audit queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from proxy.ask.channel import AskChannelError, AskChannelTimeout, ClientChannel
from proxy.ask.form import elicitation_params, read_answer, remember_choices
from proxy.ask.preview import arguments_preview
from proxy.ask.request import AskRequest, DecidedBy, Outcome
from proxy.ask.state import (
    PREFIX,
    InvalidState,
    Sealed,
    StateExpired,
    StateSealer,
    arguments_digest,
)
from proxy.ask.trust import deny_key, grant_key
from proxy.errors import GatewatchError
from proxy.ipc import protocol
from proxy.ipc.protocol import Remember
from proxy.jsonrpc import ERA_2026
from proxy.settings import DEADLINE_MARGIN_S, Settings
from proxy.store.database import Database

if TYPE_CHECKING:
    from proxy.ipc.client import AppLink

PINNING = "pinning"  # the contract of tool-change questions
INPUT_KEY = "gatewatch_approval"  # our key in inputRequests / inputResponses
RETRY_FIELDS = ("inputResponses", "requestState")
# A channel that ignores its own timeout must not hold the call past the deadline.
CHANNEL_GRACE_S = 1.0

STEPS: dict[str, tuple[str, ...]] = {
    "auto": ("elicitation", "app"),
    "elicitation": ("elicitation",),
    "app": ("app",),
    "deny": (),
}

T = TypeVar("T")


class _Cancelled(GatewatchError):
    """The client cancelled the held call."""


def without_retry_fields(params: dict[str, Any]) -> dict[str, Any]:
    """A retried call's params as the upstream must see them: Gatewatch's fields removed."""
    return {key: value for key, value in params.items() if key not in RETRY_FIELDS}


class AskChain:
    def __init__(
        self,
        server: str,
        session_id: str,
        db: Database,
        settings: Settings,
        *,
        app_link: AppLink | None = None,
        sealer: StateSealer | None = None,
    ) -> None:
        self.server = server
        self.session_id = session_id
        self.trust = db.trust
        self._denials = db.denials
        self._events = db.events
        self.settings = settings
        self._app_link = app_link
        self._sealer = sealer or StateSealer()
        self._session_grants: set[tuple[str, ...]] = set()
        self._ask_ids = itertools.count(1)

    @classmethod
    def create(
        cls,
        server: str,
        session_id: str,
        db: Database,
        settings: Settings,
        *,
        app_link: AppLink | None,
    ) -> AskChain:
        return cls(server, session_id, db, settings, app_link=app_link)

    # -- the chain -------------------------------------------------------------------------

    async def resolve(
        self, req: AskRequest, channel: ClientChannel, approved_pins: tuple[str, ...] = ()
    ) -> Outcome:
        """`approved_pins`: tool changes approved once earlier in this call, carried through a
        2026-07-28 round trip."""
        denied = self._always_denied(req)
        if denied is not None:
            return denied
        remembered = self._remembered(req)
        if remembered is not None:
            return remembered
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.ask_timeout
        for step in STEPS[self.settings.ask_via]:
            if channel.cancelled.is_set():
                return _cancelled()
            outcome: Outcome | None = None
            if step == "elicitation" and "form" in channel.elicitation_modes:
                if channel.era == ERA_2026:
                    return self._input_required(req, approved_pins)
                outcome = await self._elicit(req, channel, deadline)
            elif step == "app" and self._app_link is not None and self._app_link.connected:
                outcome = await self._ask_app(req, channel, self._app_link, deadline)
            else:
                continue
            if outcome is not None:
                return outcome
        return Outcome(False, "fallback", _no_human(self.settings.ask_via))

    @staticmethod
    def is_retry(params: dict[str, Any]) -> bool:
        """Does this tools/call carry a requestState Gatewatch issued?"""
        state = params.get("requestState")
        return isinstance(state, str) and state.startswith(PREFIX)

    def open_retry(self, req: AskRequest, params: dict[str, Any]) -> Retry:
        """A 2026-07-28 retry: check its sealed state against this call (the state opens once).

        `req` describes the retried call as the engine sees it now; then `answer_retry` reads
        the answer. The relay forwards `without_retry_fields(params)` on allow."""
        # Bound to what will be forwarded: the retried params, not only the engine's view.
        tool, arguments = params.get("name"), params.get("arguments") or {}
        if (tool, arguments) != (req.tool, req.arguments) or not isinstance(arguments, dict):
            return Retry(Outcome(False, "elicitation",
                                 "the retried call does not match its request"))
        try:
            sealed = self._sealer.open(params.get("requestState"), req.tool, req.arguments)
        except StateExpired as exc:
            return Retry(Outcome(False, "timeout", str(exc)))
        except InvalidState as exc:
            return Retry(Outcome(False, "elicitation", f"refused the retried call: {exc}"))
        responses = params.get("inputResponses")
        answer = responses.get(INPUT_KEY) if isinstance(responses, dict) else None
        return Retry(None, sealed, answer)

    def answer_retry(self, req: AskRequest, retry: Retry) -> Outcome | None:
        """The retry's answer to `req`; None when it holds none (already used for an earlier
        question of this call, or given to a different question): then ask again."""
        if retry.failure is not None:
            return retry.failure
        assert retry.sealed is not None
        if req.contract == PINNING and req.detail.get("digest") in retry.sealed.approved_pins:
            return Outcome(True, "elicitation", "the human approved this tool change earlier "
                           "in this call", remember="once")
        if retry.used:
            return None
        retry.used = True
        if retry.sealed.question != question_key(req):
            return None  # the engine asks something else now: that needs its own answer
        answer = read_answer(retry.response, req)
        return self._decided(req, answer.allow, answer.remember, "elicitation", answer.reason)

    # -- steps -----------------------------------------------------------------------------

    def _remembered(self, req: AskRequest) -> Outcome | None:
        """Allow only when every destination of the call has a grant (or the question does)."""
        if not req.destinations:
            if (req.tool, *_question_key(req)) in self._session_grants:
                return Outcome(
                    True, "trust", "approved earlier in this session", remember="session"
                )
            return None
        grant_ids: list[int] = []
        for destination in req.destinations:
            if (req.tool, grant_key(destination)) in self._session_grants:
                continue
            grant = self.trust.find(self.server, req.tool, destination)
            if grant is None:
                return None
            grant_ids.append(grant.id)
        if not grant_ids:
            return Outcome(True, "trust", "approved earlier in this session", remember="session")
        listed = ", ".join(f"#{g}" for g in grant_ids)
        return Outcome(
            True,
            "trust",
            f"remembered approval {listed}",
            remember="forever",
            grant_id=grant_ids[0],
        )

    def _always_denied(self, req: AskRequest) -> Outcome | None:
        """A human said to always deny one of this call's destinations: deny, do not ask."""
        for destination in req.destinations:
            if self._denials.find(self.server, req.tool, deny_key(destination)):
                return Outcome(False, "trust",
                               f"you chose to always deny {destination} for {req.tool}")
        return None

    def _deny_forever(self, req: AskRequest, expires_in_s: float | None) -> None:
        expires_at = time.time() + expires_in_s if expires_in_s else None
        for destination in req.destinations:
            self._denials.add(self.server, req.tool, deny_key(destination),
                              expires_at=expires_at, decided_by="app",
                              note=f"denied in session {self.session_id}")

    def _input_required(self, req: AskRequest, approved_pins: tuple[str, ...] = ()) -> Outcome:
        token = self._sealer.seal(req.tool, req.arguments, ttl=self.settings.ask_timeout,
                                  question=question_key(req), approved_pins=approved_pins)
        result = {
            "resultType": "input_required",
            "inputRequests": {
                INPUT_KEY: {
                    "method": "elicitation/create",
                    "params": elicitation_params(self.server, req),
                },
            },
            "requestState": token,
        }
        return Outcome(
            False,
            "elicitation",
            "waiting for the human's answer through the client",
            input_required=result,
        )

    async def _elicit(
        self, req: AskRequest, channel: ClientChannel, deadline: float
    ) -> Outcome | None:
        remaining = deadline - asyncio.get_running_loop().time()
        request = channel.request(
            "elicitation/create", elicitation_params(self.server, req), remaining
        )
        try:
            result = await _unless_cancelled(
                channel.cancelled, asyncio.wait_for(request, remaining + CHANNEL_GRACE_S)
            )
        except _Cancelled:
            return _cancelled()
        except (AskChannelTimeout, TimeoutError):
            return Outcome(False, "timeout", f"no answer within {self.settings.ask_timeout:g} s")
        except AskChannelError as exc:
            self._audit_step(req, "elicitation", f"the client could not elicit: {exc}")
            return None
        answer = read_answer(result, req)
        return self._decided(req, answer.allow, answer.remember, "elicitation", answer.reason)

    async def _ask_app(
        self, req: AskRequest, channel: ClientChannel, link: AppLink, deadline: float
    ) -> Outcome | None:
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        message = protocol.ask(
            ask_id=f"{self.session_id}-{next(self._ask_ids)}",
            session_id=self.session_id,
            server=self.server,
            tool=req.tool,
            destination=req.destination,
            arguments_preview=arguments_preview(req.arguments),
            arguments_digest=arguments_digest({"tool": req.tool, "arguments": req.arguments}),
            contract=req.contract,
            reason=req.reason,
            origin=req.origin,
            detail=req.detail,
            client=req.client_info or channel.client_info,
            remember_choices=remember_choices(req),
            deadline_s=max(1.0, round(remaining - DEADLINE_MARGIN_S, 1)),
            created_at=time.time(),
        )
        try:
            decision = await _unless_cancelled(channel.cancelled, link.ask(message, remaining))
        except _Cancelled:
            return _cancelled()
        if decision is None:
            if loop.time() >= deadline - 0.1:
                return Outcome(
                    False, "timeout", f"no answer within {self.settings.ask_timeout:g} s"
                )
            return Outcome(False, "fallback", "the approver went away before answering")
        expires_in = decision.get("expires_in_s")
        if (
            isinstance(expires_in, bool)
            or not isinstance(expires_in, (int, float))
            or expires_in <= 0
        ):
            expires_in = None
        allow = decision.get("allow") is True
        if not allow and decision.get("timed_out") is True:
            return Outcome(False, "timeout", "nobody answered the Gatewatch popup in time")
        if allow:
            reason = "allowed in the Gatewatch app"
        else:
            reason = "denied in the Gatewatch app"
            if decision.get("remember") == "forever" and req.destinations:
                self._deny_forever(req, expires_in)
                reason = "denied for good in the Gatewatch app"
            said = decision.get("agent_message")
            if isinstance(said, str) and said.strip():
                reason += f". The user says: {' '.join(said.split())[:500]}"
        return self._decided(req, allow, decision.get("remember"), "app", reason, expires_in)

    # -- remembering -----------------------------------------------------------------------

    def _decided(
        self,
        req: AskRequest,
        allow: bool,
        remember: Any,
        decided_by: DecidedBy,
        reason: str,
        expires_in_s: float | None = None,
    ) -> Outcome:
        if not allow:
            return Outcome(False, decided_by, reason)
        scope: Remember = remember if remember in remember_choices(req) else "once"
        if remember == "forever" and scope == "once":
            scope = "session"  # nothing to store for good without a destination
        grant_id = None
        if req.contract == PINNING:
            pass  # a tool approval is the engine's to keep (see proxy.ask.held)
        elif scope == "session":
            self._session_grants.update(_grant_keys(req))
        elif scope == "forever" and req.destinations:
            expires_at = time.time() + expires_in_s if expires_in_s else None
            ids = [
                self.trust.add(
                    self.server,
                    req.tool,
                    destination,
                    expires_at=expires_at,
                    decided_by=decided_by,
                    note=f"approved in session {self.session_id}",
                )
                for destination in req.destinations
            ]
            grant_id = ids[0]
        return Outcome(True, decided_by, reason, remember=scope, grant_id=grant_id)

    def _audit_step(self, req: AskRequest, step: str, reason: str) -> None:
        detail = orjson.dumps({"destination": req.destination}).decode()
        self._events.ask_step(
            ts=time.time(),
            session_id=self.session_id,
            server=self.server,
            rpc_id=_rpc_text(req.rpc_id),
            tool=req.tool,
            contract=req.contract,
            reason=reason,
            step=step,
            detail=detail,
        )


def _grant_keys(req: AskRequest) -> list[tuple[str, ...]]:
    if req.destinations:
        return [(req.tool, grant_key(d)) for d in req.destinations]
    return [(req.tool, *_question_key(req))]


def _question_key(req: AskRequest) -> tuple[str, str]:
    # No destination: the approval covers this exact question only.
    return (req.contract, arguments_digest(req.detail))


def question_key(req: AskRequest) -> str:
    """What a sealed answer is an answer to: the contract, the tool version a pin question
    shows, and the destinations a sink question names."""
    return arguments_digest({"c": req.contract, "p": req.detail.get("pin"),
                             "v": req.detail.get("digest"), "d": sorted(req.destinations)})


@dataclass
class Retry:
    """An opened 2026-07-28 retry: a failure, or what the sealed state vouches for and the
    client's answer (to be used for one question only)."""

    failure: Outcome | None
    sealed: Sealed | None = None
    response: Any = None
    used: bool = False


def _rpc_text(rpc_id: Any) -> str | None:
    return None if rpc_id is None else str(rpc_id)


def _cancelled() -> Outcome:
    return Outcome(False, "cancelled", "the client cancelled the call")


def _no_human(ask_via: str) -> str:
    if ask_via == "deny":
        return "ask_via is 'deny': Gatewatch never asks"
    return "no way to ask a human (the client cannot elicit and no Gatewatch app is running)"


async def _unless_cancelled(cancelled: asyncio.Event, work: Awaitable[T]) -> T:
    """Await `work`, abandoning (and cancelling) it when `cancelled` is set first."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancelled.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task  # lets the step void its question (AppLink sends `cancel`)
    raise _Cancelled
