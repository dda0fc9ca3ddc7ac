"""Same-run A/B of an in-process benchmark: this tree against other trees (`git archive` copies).

A benchmark script that accepts `--root DIR` (import `proxy` from DIR) and `--json` is run in a
subprocess per tree and round, the trees' order alternating from one round to the next, so
load from the other engineers on the machine falls on both alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def trees(bases: list[str]) -> dict[str, Path]:
    """`this` and each `--base [NAME=]DIR` (named `base` when unnamed)."""
    out = {"this": ROOT}
    for spec in bases:
        name, _, path = spec.rpartition("=")
        out[name or "base"] = Path(path).resolve()
    return out


def interleaved(script: Path, roots: dict[str, Path], args: list[str],
                rounds: int) -> dict[str, list[Any]]:
    """Each tree's JSON report, `rounds` times, run in alternating order."""
    names = list(roots)
    out: dict[str, list[Any]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            command = [sys.executable, str(script), "--root", str(roots[name]), "--json", *args]
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            out[name].append(json.loads(done.stdout))
    return out


def use_root(root: str | None) -> None:
    """Import `proxy` (and the packs it reads) from `root` instead of this tree."""
    if root is not None:
        sys.path.insert(0, str(Path(root).resolve()))


def span(values: list[float], digits: int | None = None) -> str:
    """min-max of a measurement over rounds (one value when they agree to the digit); by
    default three significant digits or so."""
    if digits is None:
        top = max(values)
        digits = 3 if top < 1 else 2 if top < 10 else 1 if top < 100 else 0
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}-{high}"
