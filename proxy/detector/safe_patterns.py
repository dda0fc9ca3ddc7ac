"""Remember which patterns passed the ReDoS checks, so loading the packs skips re-checking them.

Parsing and walking 70-odd patterns is most of load_detector()'s time. A pattern that passed
once passes again (the check is a pure function of the pattern and the checker), so the SHA-256
of (checker version, pattern) of each safe pattern is kept in <data_dir>/detector-safe-patterns.
Only passes are remembered; a missing or unreadable file just means checking again.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from proxy.detector.redos import CHECKER_VERSION, pattern_problems

_known: set[str] | None = None


def _path() -> Path:
    from proxy.paths import data_dir

    return data_dir() / "detector-safe-patterns"


def _key(pattern: str) -> str:
    return hashlib.sha256(f"{CHECKER_VERSION}\0{pattern}".encode()).hexdigest()


def checked_pattern_problems(pattern: str) -> list[str]:
    """pattern_problems(pattern), answered from the cache when the pattern passed before."""
    global _known
    if _known is None:
        try:
            _known = set(_path().read_text(encoding="ascii").split())
        except (OSError, UnicodeDecodeError):
            _known = set()
    key = _key(pattern)
    if key in _known:
        return []
    problems = pattern_problems(pattern)
    if not problems:
        _known.add(key)
        with contextlib.suppress(OSError):  # a cache: failing to write it costs only time
            path = _path()
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="ascii") as out:
                out.write(key + "\n")
    return problems
