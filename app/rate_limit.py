"""Desktop notifications must not become a flood: a sliding-window limit, plain Python."""

from __future__ import annotations

import time
from collections import deque


class RateLimiter:
    """At most `limit` events per `window_s` seconds; the rest are counted as suppressed."""

    def __init__(self, limit: int = 3, window_s: float = 60.0) -> None:
        self.limit = limit
        self.window_s = window_s
        self._times: deque[float] = deque()
        self.suppressed = 0

    def allow(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) < self.limit:
            self._times.append(now)
            return True
        self.suppressed += 1
        return False

    def take_suppressed(self) -> int:
        count, self.suppressed = self.suppressed, 0
        return count
