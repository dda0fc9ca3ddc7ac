"""How remembered answers are spelled: destinations as the engine looks them up (approvals
exact, denials loose), and durations as people type them. The grants themselves:
proxy.store.trust.TrustStore.
"""

from __future__ import annotations

import re

from proxy.errors import InvalidValue


def grant_key(destination: str) -> str:
    """A destination as approvals are remembered: a URL's path with its case, https kept."""
    from proxy.engine.destinations import grant_key as key

    return key(destination)


def deny_key(destination: str) -> str:
    """A destination as standing denies are remembered: every spelling of it, case folded."""
    from proxy.engine.destinations import normalize_destination

    return normalize_destination(destination)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """'90s', '30m', '24h', '7d', '2w' -> seconds."""
    match = _DURATION.match(text.lower())
    if not match or float(match.group(1)) <= 0:
        raise InvalidValue(f"{text!r} is not a duration: write a number and a unit, e.g. 24h or 7d")
    return float(match.group(1)) * _UNIT_S[match.group(2)]
