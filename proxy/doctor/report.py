"""What one doctor check found, and how the findings are printed."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass


class Status(enum.IntEnum):
    """Ordered so the worst status is the largest; its value is doctor's exit code."""

    OK = 0
    WARN = 1
    FAIL = 2


@dataclass(frozen=True)
class CheckResult:
    check: str  # short id, e.g. "database"
    status: Status
    summary: str  # one line: what was found
    hint: str | None = None  # what to do about it, when not OK

    def line(self) -> str:
        text = f"{self.status.name:<4}  {self.check:<12} {self.summary}"
        return f"{text}\n      -> {self.hint}" if self.hint else text

    def as_dict(self) -> dict[str, str | None]:
        return {
            "check": self.check,
            "status": self.status.name,
            "summary": self.summary,
            "hint": self.hint,
        }


def worst(results: Iterable[CheckResult]) -> Status:
    return max((r.status for r in results), default=Status.OK)


def render_text(results: list[CheckResult]) -> str:
    counts = {s: sum(1 for r in results if r.status is s) for s in Status}
    tail = ", ".join(f"{counts[s]} {s.name}" for s in Status)
    return "\n".join([*(r.line() for r in results), f"-- {tail}"])


def render_json(results: list[CheckResult]) -> str:
    return json.dumps(
        {"status": worst(results).name, "checks": [r.as_dict() for r in results]}, indent=2
    )
