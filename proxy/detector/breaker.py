"""Circuit breaker: after N failures in a row, stop calling for a while, then try once."""

from __future__ import annotations

import time
from collections.abc import Callable


class CircuitBreaker:
    def __init__(
        self, threshold: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self.failures = 0
        self.opened_at: float | None = None

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half_open" if self._clock() - self.opened_at >= self.cooldown_s else "open"

    def allow(self) -> bool:
        """Closed, or open long enough that one trial call may go through."""
        return self.state != "open"

    def record_success(self) -> None:
        self.failures = 0
        self.opened_at = None

    def record_failure(self) -> None:
        self.failures += 1
        if self.opened_at is not None or self.failures >= self.threshold:
            self.opened_at = self._clock()  # a failed trial re-opens for a full cooldown
