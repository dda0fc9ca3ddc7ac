"""Trusted-destination lists from packs and user policy.

Entries are exact values (`alice@corp.com`), globs (`*@corp.com`, `*.corp.com`), hosts
(`corp.com`: any URL on that host) or URL prefixes (`https://hooks.corp.com/services/`).
Everything is compared in normalised form.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from proxy.engine.destinations import host_of, normalize_destination


class TrustList:
    def __init__(self, entries: Iterable[str]) -> None:
        self._exact: dict[str, str] = {}
        self._prefixes: list[tuple[str, str]] = []
        self._globs: list[tuple[str, str]] = []
        for entry in entries:
            if any(ch in entry for ch in "*?["):
                self._globs.append((entry.strip().casefold().removeprefix("mailto:"), entry))
                continue
            norm = normalize_destination(entry)
            if not norm:
                continue
            self._exact[norm] = entry
            if host_of(norm) is not None:
                self._prefixes.append((norm.rstrip("/") + "/", entry))

    def match(self, destination: str) -> str | None:
        """The entry that vouches for a normalised destination, or None."""
        if destination in self._exact:
            return self._exact[destination]
        for prefix, entry in self._prefixes:
            if destination.startswith(prefix):
                return entry
        for pattern, entry in self._globs:
            if fnmatch.fnmatchcase(destination, pattern):
                return entry
            host = host_of(destination)
            if host is not None and fnmatch.fnmatchcase(host, pattern):
                return entry
        return None

    def __bool__(self) -> bool:
        return bool(self._exact or self._globs)
