"""The absolute path of Gatewatch's own `gatewatch` executable, for wrapped entries.

Clients launch servers without the user's shell PATH, so wrapped entries name it absolutely.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from proxy.errors import GatewatchError

OVERRIDE_ENV = "GATEWATCH_EXECUTABLE"


class ExecutableNotFound(GatewatchError, RuntimeError):
    pass


def gatewatch_executable() -> str:
    override = os.environ.get(OVERRIDE_ENV)
    if override:
        return str(Path(override).expanduser().absolute())
    # The console script sits next to the venv's python (not resolved: that would leave the venv).
    bindir = Path(sys.executable).absolute().parent
    for name in ("gatewatch", "gatewatch.exe"):
        candidate = bindir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("gatewatch")
    if found:
        return str(Path(found).absolute())
    raise ExecutableNotFound(
        f"cannot find the `gatewatch` executable next to {sys.executable} or on PATH; "
        f"reinstall Gatewatch, or set {OVERRIDE_ENV} to its absolute path"
    )
