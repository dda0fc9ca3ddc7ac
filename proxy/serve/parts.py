"""Access to the engine and detector, which `gatewatch serve` drives but does not own."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


class Unavailable(RuntimeError):
    """A part of Gatewatch this tool needs is not in this build."""


def require(module: str, *names: str) -> ModuleType:
    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{module} is not available yet in this build of Gatewatch")
    loaded = importlib.import_module(module)
    missing = [n for n in names if not hasattr(loaded, n)]
    if missing:
        raise Unavailable(f"{module} does not provide {', '.join(missing)} yet")
    return loaded
