"""Terminal output helpers: colour only when writing to a terminal (and NO_COLOR is unset)."""

from __future__ import annotations

import os
import sys
from typing import TextIO

COLOURS = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
    "dim": "2",
    "bold": "1",
}


def use_colour(stream: TextIO = sys.stdout) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def paint(text: str, colour: str | None, enabled: bool) -> str:
    if not enabled or colour is None:
        return text
    return f"\033[{COLOURS[colour]}m{text}\033[0m"


def verdict_colour(verdict: str | None) -> str | None:
    return {
        "allow": "green",
        "pass": "green",
        "warn": "yellow",
        "ask": "yellow",
        "deny": "red",
        "block": "red",
    }.get(verdict or "")
