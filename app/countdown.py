"""Countdown of the approval popup, as plain state: a QTimer only calls `tick()`.

Any interaction pauses it for good (the user is reading; the proxy's own deadline still bounds
the wait). It can be switched off entirely.
"""

from __future__ import annotations

import math


class Countdown:
    def __init__(self, seconds: float, enabled: bool = True) -> None:
        self.total = max(0.0, seconds)
        self.remaining = self.total
        self.enabled = enabled and self.total > 0
        self.paused = False

    @property
    def running(self) -> bool:
        return self.enabled and not self.paused and self.remaining > 0

    def pause(self) -> None:
        self.paused = True

    def tick(self, elapsed: float) -> bool:
        """Advance the clock; True exactly once, when it runs out."""
        if not self.running:
            return False
        self.remaining = max(0.0, self.remaining - elapsed)
        return self.remaining == 0

    def label(self) -> str:
        """What the Deny button shows beside its name ("" when there is nothing to count)."""
        if not self.enabled:
            return ""
        if self.paused:
            return "paused"
        return f"{math.ceil(self.remaining)} s"


def popup_seconds(popup_timeout: float, deadline_left: float) -> float:
    """A countdown never outlives the proxy's deadline (docs/ipc.md, "Timing")."""
    return max(0.0, min(popup_timeout, deadline_left))
