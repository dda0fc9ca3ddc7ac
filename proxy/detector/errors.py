"""Errors raised while loading rule packs and the detector policy."""

from __future__ import annotations

from pathlib import Path


class PackError(ValueError):
    """A rule pack, detector policy or detector settings file is malformed.

    Carries the file, the 1-based line (0 when unknown) and what to do about it, so the user can
    fix the file without reading code.
    """

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line else str(self.path)
        super().__init__(f"{where}: {reason}")
