"""Which icon and tooltip the tray shows, computed from plain facts."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class TrayState(enum.Enum):
    IDLE = "idle"  # no proxy connected
    RUNNING = "running"
    PENDING = "pending"  # questions waiting for the human
    MISSED = "missed"  # a question timed out unanswered; cleared when the window opens
    PAUSED = "paused"  # all servers paused


@dataclass(frozen=True)
class TrayFacts:
    proxies: int
    pending: int
    missed: int
    all_paused: bool
    unprotected: str = ""  # "6 servers in 3 clients are not protected", or ""


def tray_state(facts: TrayFacts) -> TrayState:
    # Most urgent first: a waiting question beats everything, a missed one beats routine.
    if facts.pending > 0:
        return TrayState.PENDING
    if facts.missed > 0:
        return TrayState.MISSED
    if facts.all_paused:
        return TrayState.PAUSED
    if facts.proxies > 0:
        return TrayState.RUNNING
    return TrayState.IDLE


def tray_tooltip(facts: TrayFacts) -> str:
    servers = f"{facts.proxies} server{'s' if facts.proxies != 1 else ''} running"
    parts = ["Gatewatch", "no servers running" if facts.proxies == 0 else servers]
    if facts.pending:
        parts.append(f"{facts.pending} question{'s' if facts.pending != 1 else ''} waiting")
    if facts.missed:
        parts.append(f"{facts.missed} missed (denied)")
    if facts.all_paused:
        parts.append("all servers paused")
    if facts.unprotected:
        parts.append(facts.unprotected)
    return " — ".join(parts)
