"""The call gate: one place where the relay asks the engine, the detector and the ask chain.

The relay knows frames; the gate knows decisions. Each component is optional (a proxy without
a policy engine allows, without a detector passes), and any exception inside a component turns
into the safe answer (deny a call, block a result): fail closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy.decision import Decision

if TYPE_CHECKING:
    from proxy.detector.policy import Verdict as ScanVerdict
    from proxy.relay.actions import Asker

log = logging.getLogger(__name__)
BLOCK_PREFIX = "[gatewatch blocked]"


@dataclass(frozen=True)
class ResultCheck:
    verdict: ScanVerdict  # the detector's: pass | warn | block
    reason: str = ""
    notes: tuple[str, ...] = ()
    detail: dict[str, Any] | None = None  # the detector's own summary, for the audit row

    def audit_detail(self) -> dict[str, Any] | None:
        return None if self.verdict == "pass" and not self.notes else self.detail


ALLOW = Decision("allow", "default", "no contract applies")
PASS = ResultCheck("pass")


def _complain(what: str) -> None:
    log.exception("internal error in %s; failing closed", what)


class Gate:
    """Components may arrive after the relay starts (they load off the start path); until
    `ready()`, intercepted frames wait on `wait_ready()`. A component that failed to load (a
    malformed policy or pack) leaves the gate `broken`: every call is denied with the reason.

    A tools/list answer passes unchanged whatever the engine says, so it need not wait for the
    engine: what the listing tells the engine (and list_changed notices) is kept, in order, and
    handed to it in `ready()` before any call can be decided."""

    def __init__(
        self, engine: Any = None, detector: Any = None, asker: Asker | None = None
    ) -> None:
        self.engine = engine
        self.detector = detector
        self.asker = asker  # the ask chain; without one, a call that needs a human is denied
        self.paused = False
        self.broken: str | None = None
        self._ready = asyncio.Event()
        self._backlog: list[Callable[[], None]] = []  # listings seen before the engine loaded
        if engine is not None or detector is not None:
            self._ready.set()

    def ready(
        self,
        engine: Any = None,
        detector: Any = None,
        *,
        asker: Asker | None = None,
        broken: str | None = None,
    ) -> None:
        self.engine, self.detector, self.asker, self.broken = engine, detector, asker, broken
        self._ready.set()  # waiters resume only after this returns, with the backlog applied
        backlog, self._backlog = self._backlog, []
        for step in backlog:
            step()

    @property
    def pins_tools(self) -> bool:
        """Does a decision depend on how the upstream lists its tools (an engine is deciding)?"""
        return self.engine is not None and self.broken is None and not self.paused

    def listing_stale(self) -> bool:
        """The upstream said its tools changed and nobody has listed them since."""
        try:
            return self.engine is not None and bool(self.engine.needs_tools_list)
        except Exception:
            _complain("tool pinning")
            return True

    @property
    def backlog(self) -> bool:
        """Has a listing been seen that the engine, still loading, has not been told of?"""
        return bool(self._backlog)

    async def wait_ready(self) -> None:
        if not self._ready.is_set():
            await self._ready.wait()

    def decide(self, tool: str, arguments: dict[str, Any]) -> Decision:
        if self.broken is not None:
            return Decision("deny", "config", self.broken)
        if self.paused:
            return Decision("deny", "paused", "server paused in Gatewatch")
        if self.engine is None:
            return ALLOW
        try:
            decision = self.engine.decide(tool, arguments)
            if not isinstance(decision, Decision):
                raise TypeError(f"the engine answered {type(decision).__name__}, not a Decision")
        except Exception:
            _complain("the decision engine")
            return Decision("deny", "internal", "Gatewatch could not evaluate this call")
        return decision

    def tools_listed(self, tools: list[Any]) -> None:
        if not self._ready.is_set():
            self._backlog.append(lambda: self.tools_listed(tools))
            return
        if self.engine is not None:
            try:
                self.engine.tools_listed(tools)
            except Exception:
                _complain("tool pinning")

    def tools_changed(self) -> None:
        if not self._ready.is_set():
            self._backlog.append(self.tools_changed)
            return
        if self.engine is not None:
            try:
                self.engine.tools_changed()
            except Exception:
                _complain("tool pinning")

    def result_seen(
        self, tool: str, result: dict[str, Any], arguments: dict[str, Any] | None = None
    ) -> None:
        if self.engine is not None:
            try:
                self.engine.result_seen(tool, result, arguments)
            except Exception:
                _complain("taint tracking")

    def result_inspected(self, tool: str, result: dict[str, Any], verdict: str) -> None:
        # Without a detector nothing is known clean or flagged: taint stays as it is.
        if self.engine is not None and self.detector is not None:
            try:
                self.engine.result_inspected(tool, result, verdict)
            except Exception:
                _complain("injected-action tracking")

    async def inspect(self, method: str, result: dict[str, Any]) -> ResultCheck:
        if self.detector is None:
            return PASS
        try:
            if getattr(self.detector, "classifier", None) is not None:
                r = await self.detector.inspect_result_async(method, result)
            else:
                r = self.detector.inspect_result(method, result)
        except Exception:
            _complain("the injection detector")
            return ResultCheck("block", "Gatewatch could not inspect this result")
        return ResultCheck(r.verdict, r.reason, tuple(r.notes), r.detail())
