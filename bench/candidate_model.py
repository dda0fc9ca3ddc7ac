"""A candidate model file scored in place of the shipped one, for the bench scripts' --model.

A candidate is judged by the same detector, rules and policy as the shipped model, so only the
file the learned layer reads changes: the detector's reference to `shipped_model` is pointed at
the candidate before any scan. Bench only; the proxy has no such switch.
"""

from __future__ import annotations

import time
from pathlib import Path


def use_model(path: Path) -> str:
    """Score with the model in `path` from now on in this process; its version."""
    import proxy.detector.detector as detector_module
    from proxy.detector.model import Loaded, read_model

    started = time.perf_counter()
    loaded = Loaded(read_model(path), (time.perf_counter() - started) * 1000)
    detector_module.shipped_model = lambda: loaded  # type: ignore[assignment]
    return loaded.model.version
