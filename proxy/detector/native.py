"""The detector's C extension (proxy/detector/_native.c), when it was built and is wanted.

The extension is compiled at install time (installer/native_build.py); where that failed the
detector runs its Python path, which gives the same results to the last bit, only slower.
GATEWATCH_NATIVE=0 forces the Python path.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from types import ModuleType

ENV = "GATEWATCH_NATIVE"
SOURCE = Path(__file__).with_name("_native.c")


def wanted() -> bool:
    return os.environ.get(ENV, "1") != "0"


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
        return f"off ({ENV}=0): the detector runs its Python path"
    if _stale():
        return f"stale (built from another {SOURCE.name}): the detector runs its Python path"
    if _module() is None:
        return "not built: the detector runs its Python path (same verdicts, slower)"
    return "loaded: the learned layer's scorer runs in C"
