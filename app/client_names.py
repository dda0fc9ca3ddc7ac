"""Which app's config starts a server: the answer to "who is asking?" in the popup.

A client's `initialize` often names only its MCP library ("mcp 0.1.0"). The wrapped entries in
the client configs say which app launches `gatewatch run --name NAME -- CMD`, so a proxy's server
name and command point at the app. No Qt here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from proxy.clients.discovery import LoadedConfig


@dataclass(frozen=True)
class Launcher:
    client: str  # the client's label, e.g. "Claude Desktop"
    server: str
    command: tuple[str, ...]  # the original command line, as the proxy reports it


def launchers(loaded: list[LoadedConfig]) -> list[Launcher]:
    from proxy.redact import redact_argv

    found: list[Launcher] = []
    for config in loaded:
        for entry in config.entries:
            original = entry.original
            if entry.wrapped and original is not None:
                argv = redact_argv([original[0], *original[1]])
                found.append(Launcher(config.config.client.label, entry.name, tuple(argv)))
    return found


def launched_by(known: list[Launcher], server: str, command: list[str]) -> str:
    """The app (or apps, "A or B") whose config runs this server; "" when none does."""
    named = [k for k in known if k.server == server]
    if len({k.client for k in named}) > 1 and command:
        same = [k for k in named if _same_command(k.command, command)]
        named = same or named
    return " or ".join(dict.fromkeys(k.client for k in named))


def _same_command(a: tuple[str, ...], b: list[str]) -> bool:
    if len(a) != len(b) or not a:
        return False
    # The client may name the program by path and the proxy by what it resolved to.
    return PurePath(a[0]).name == PurePath(b[0]).name and list(a[1:]) == b[1:]


class LauncherIndex:
    """launchers() of the configs on disk, read again at most every `max_age_s`."""

    def __init__(self, load: Callable[[], list[LoadedConfig]] | None = None,
                 max_age_s: float = 60.0) -> None:
        self._load = load
        self._max_age_s = max_age_s
        self._known: list[Launcher] = []
        self._read_at: float | None = None

    def invalidate(self) -> None:
        self._read_at = None

    def lookup(self, server: str, command: list[str]) -> str:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at > self._max_age_s:
            self._read_at = now
            try:
                if self._load is None:
                    from proxy.clients.changes import load_all

                    self._known = launchers(load_all())
                else:
                    self._known = launchers(self._load())
            except Exception:  # an unreadable config must not break asking
                self._known = []
        return launched_by(self._known, server, command)
