"""Evaluation batches kept in tests/data (written by helpers that saw no rule, measured once):
loading one, and its indices as pytest parameters, the ones that missed at the measurement as
strict expected failures (so a change that catches one shows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, list[dict[str, str]]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def indices(count: int, missed: set[int], reason: str) -> list[Any]:
    """range(count), each index in `missed` marked as a strict expected failure."""
    return [
        pytest.param(i, marks=pytest.mark.xfail(strict=True, reason=reason)) if i in missed else i
        for i in range(count)
    ]
