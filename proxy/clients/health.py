"""Is each server wrapped, and does its wrapped command still point at a runnable Gatewatch?

For `gatewatch doctor`: an entry wrapped by a Gatewatch that was moved or uninstalled leaves the
client unable to start that server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from proxy.clients.catalog import GATEWATCH_ENV
from proxy.clients.discovery import ConfigFile, LoadedConfig
from proxy.clients.entries import ServerEntry, Transport


@dataclass(frozen=True)
class EntryHealth:
    config: ConfigFile
    server: str
    wrapped: bool
    command: str | None
    # None when fine (or not wrapped); else what is wrong with the wrapped command.
    problem: str | None


def check_entry(config: ConfigFile, entry: ServerEntry) -> EntryHealth:
    problem = None
    if entry.wrapped and entry.command is not None:
        exe = Path(entry.command)
        if not exe.is_absolute():
            problem = f"wrapped command {entry.command!r} is not an absolute path"
        elif not exe.is_file():
            problem = f"wrapped command {exe} does not exist (wrap again to repair)"
        elif not os.access(exe, os.X_OK):
            problem = f"wrapped command {exe} is not executable"
    return EntryHealth(config, entry.name, entry.wrapped, entry.command, problem)


def passes_gatewatch_env(loaded: LoadedConfig, entry: ServerEntry) -> bool:
    """False for a wrapped entry of a client with a minimal server environment (Codex) whose
    pass-through list lacks what `gatewatch run` needs (wrapped by an older Gatewatch)."""
    fields = entry.fields
    if not entry.wrapped or fields is None or fields.passes_env is None or loaded.doc is None:
        return True
    node = loaded.doc.node((*fields.parent, fields.passes_env))
    names = node.strings() if node is not None else None
    return names is not None and set(GATEWATCH_ENV) <= set(names)


def check(loaded: LoadedConfig) -> list[EntryHealth]:
    return [check_entry(loaded.config, e) for e in loaded.entries
            if e.transport is Transport.STDIO]
