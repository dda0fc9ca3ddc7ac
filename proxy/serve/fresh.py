"""Values built from YAML files, rebuilt only when one of those files changed.

`gatewatch serve` is long-running: re-reading every pack on each call costs ~150 ms, while a
restart to pick up an edited policy would surprise. Keying on (path, mtime, size) of the source
files gives both: fast calls, and an edit takes effect on the next call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
Stamp = tuple[tuple[str, int, int], ...]


def stamp(paths: Iterable[Path]) -> Stamp:
    """What identifies the files' contents cheaply; a missing file counts as (path, -1, -1)."""
    out = []
    for path in sorted(set(paths)):
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def yaml_files(*places: Path) -> list[Path]:
    """The places themselves, plus the *.yaml files of those that are directories."""
    out: list[Path] = []
    for place in places:
        out.append(place)
        if place.is_dir():
            out.extend(place.rglob("*.yaml"))
    return out


class Fresh(Generic[T]):
    def __init__(self, build: Callable[[], T], sources: Callable[[], Iterable[Path]]) -> None:
        self._build = build
        self._sources = sources
        self._stamp: Stamp | None = None
        self._value: T | None = None

    def get(self) -> T:
        current = stamp(self._sources())
        if self._value is None or current != self._stamp:
            self._value = self._build()  # may raise: then nothing is cached
            self._stamp = current
        return self._value
