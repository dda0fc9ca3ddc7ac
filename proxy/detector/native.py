"""The C extension (proxy/detector/_native.c), when it was built and is wanted: the detector's
learned layer and tokens, and the engine's destination finder (proxy/engine/destinations.py)
and taint's contact test (proxy/engine/taint.py).

The extension is compiled at install time (installer/native_build.py); where that failed the
detector and the finder run their Python paths, which give the same results (to the last bit,
the same destinations), only slower. GATEWATCH_NATIVE=0 forces the Python paths.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

ENV = "GATEWATCH_NATIVE"
SOURCE = Path(__file__).with_name("_native.c")


# os.environ.get() of a name that is not set raises and catches a KeyError inside it (a few
# µs, and the detector asks several times per scan); the dict os.environ keeps up to date
# answers the same question directly, decoded the same way.
_ENVIRON: dict[Any, Any] | None = getattr(os.environ, "_data", None)
_KEY: Any = os.environ.encodekey(ENV) if _ENVIRON is not None else ENV


def wanted() -> bool:
    if _ENVIRON is None:
        return os.environ.get(ENV, "1") != "0"
    raw = _ENVIRON.get(_KEY)
    return raw is None or os.environ.decodevalue(raw) != "0"


@functools.cache
def _built() -> ModuleType | None:
    try:
        from proxy.detector import _native
    except ImportError:
        return None
    return _native


@functools.cache
def _stale() -> bool:
    """The module was built from another source than the _native.c beside it (an edit since
    the last `pip install -e`): its code is not the code under test, so it is not used."""
    module = _built()
    if module is None or not SOURCE.exists():
        return False
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest() != module.SOURCE_SHA256


@functools.cache
def _module() -> ModuleType | None:
    return None if _stale() else _built()


def load() -> ModuleType | None:
    """The extension module, or None: not built, or GATEWATCH_NATIVE=0."""
    return _module() if wanted() else None


def status() -> str:
    """One line for `gatewatch doctor`."""
    if not wanted():
        return f"off ({ENV}=0): the detector and the destination finder run their Python paths"
    if _stale():
        return (f"stale (built from another {SOURCE.name}): the detector and the destination "
                "finder run their Python paths")
    if _module() is None:
        return ("not built: the detector and the destination finder run their Python paths "
                "(same verdicts, slower)")
    return "loaded: the learned layer's scorer and the destination finder run in C"
