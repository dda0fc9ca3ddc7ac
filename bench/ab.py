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
    """`this` and each `--base [NAME=]DIR` (named `base` when unnamed).

    A `git archive` copy has no built extension modules: it would run the pure-Python
    fallbacks and look two times slower than it is, so such a tree is refused.
    """
    out = {"this": ROOT}
    built = {path.relative_to(ROOT) for path in (ROOT / "proxy").rglob("*.so")}
    for spec in bases:
        name, _, path = spec.rpartition("=")
        root = Path(path).resolve()
        missing = sorted(str(rel) for rel in built if not (root / rel).exists())
        if missing:
            raise SystemExit(f"bench: {root} lacks the built {', '.join(missing)}: build it "
                             f"there or copy it from {ROOT} if its source is the same")
        out[name or "base"] = root
    return out


def interleaved(script: Path, roots: dict[str, Path], args: list[str],
                rounds: int) -> dict[str, list[Any]]:
    """Each tree's JSON report, `rounds` times, run in alternating order."""
    names = list(roots)
    out: dict[str, list[Any]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            command = [sys.executable, str(script), "--root", str(roots[name]), "--json", *args]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"bench: the run in {roots[name]} failed:\n{done.stderr}")
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
