"""Run `python -m proxy ...` recording the garbage collector's passes (bench/call_profile.py --gc).

    python bench/gc_passes.py OUT.json run --name ... -- upstream...

Writes to OUT.json at exit every pass as [wall-clock start, generation, seconds], and how many
objects the collector tracks at the end and how many are frozen out of its passes.
"""

from __future__ import annotations

import atexit
import gc
import json
import runpy
import sys
import time
from typing import Any

_passes: list[tuple[float, int, float]] = []
_started = (0.0, 0.0)


def _record(phase: str, info: dict[str, Any]) -> None:
    global _started
    if phase == "start":
        _started = (time.time(), time.perf_counter())
        return
    _passes.append((_started[0], info["generation"], time.perf_counter() - _started[1]))


def _write(out: str) -> None:
    with open(out, "w") as f:
        json.dump({"passes": _passes, "tracked": len(gc.get_objects()),
                   "frozen": gc.get_freeze_count()}, f)


if __name__ == "__main__":
    target = sys.argv[1]
    gc.callbacks.append(_record)
    atexit.register(_write, target)
    sys.argv = ["proxy", *sys.argv[2:]]
    runpy.run_module("proxy", run_name="__main__", alter_sys=True)
