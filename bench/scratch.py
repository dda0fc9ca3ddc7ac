"""Scratch directories for one run of a bench or docs script, removed when it exits."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch(prefix: str) -> Path:
    """A new directory under the system's temp directory, removed at interpreter exit (a
    measurement run leaves nothing behind: a hundred runs used to leave a hundred homes)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
