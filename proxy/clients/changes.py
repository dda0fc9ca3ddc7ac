"""Plan a wrap or unwrap across config files, preview it as a diff, then apply it.

A plan records each file's fingerprint; apply() refuses a file whose bytes changed since, backs
each file up before writing it, and writes keyring secrets before the file that refers to them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from proxy.clients import secrets
from proxy.clients.discovery import ConfigFile, LoadedConfig, discover, load
from proxy.clients.edits import EditError
from proxy.clients.entries import ServerEntry, Transport
from proxy.clients.executable import gatewatch_executable
from proxy.clients.files import (
    StaleFileError,
    backup,
    backups_holding,
    check_unchanged,
    replace_if_unchanged,
)
from proxy.clients.wrapping import Editor

Action = Literal["wrap", "unwrap"]
Selector = Callable[[ConfigFile, ServerEntry], bool]
_MASK = "********"


@dataclass(frozen=True)
class Moved:
    """One env value moved into the keyring: which server and variable, under what name."""

    server: str
    var: str
    username: str  # keyring service SERVICE, this username

    def describe(self) -> str:
        return f"{self.server}: {self.var} -> keyring {secrets.SERVICE} / {self.username}"


@dataclass
class FileChange:
    config: ConfigFile
    before: str
    after: str
    fingerprint: str
    servers: list[str] = field(default_factory=list)  # wrapped, rewrapped or unwrapped
    to_store: list[tuple[str, str]] = field(default_factory=list)  # (keyring username, secret)
    # (keyring username, secret) to delete after the write; the secret is kept for undo.
    to_forget: list[tuple[str, str]] = field(default_factory=list)
    secrets_shown: list[str] = field(default_factory=list)  # masked in the preview
    moved: list[Moved] = field(default_factory=list)  # values this change puts in the keyring

    def diff(self) -> str:
        name = str(self.config.path)
        lines = difflib.unified_diff(self.before.splitlines(keepends=True),
                                     self.after.splitlines(keepends=True), name, name)
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        for secret in self.secrets_shown:
            text = text.replace(secret, _MASK)
        return text


@dataclass
class Skipped:
    config: ConfigFile
    server: str
    reason: str


@dataclass
class Plan:
    action: Action
    changes: list[FileChange] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def preview(self) -> str:
        return "".join(change.diff() for change in self.changes)


@dataclass
class Applied:
    written: list[tuple[Path, Path]] = field(default_factory=list)  # (file, its backup)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    restart: list[str] = field(default_factory=list)  # what to do for each changed client
    # Backups of files whose secrets moved: they still hold the plaintext values.
    plaintext_backups: list[Path] = field(default_factory=list)


def everything(config: ConfigFile, entry: ServerEntry) -> bool:
    return True


def select(client: str | None = None, server: str | None = None,
           path: Path | None = None) -> Selector:
    def chosen(config: ConfigFile, entry: ServerEntry) -> bool:
        return ((client is None or config.client.id == client)
                and (server is None or entry.name == server)
                and (path is None or config.path.absolute() == path.absolute()))
    return chosen


def make_plan(
    action: Action,
    configs: list[LoadedConfig],
    chosen: Selector = everything,
    *,
    secrets_to_keyring: bool = False,
    allow_plaintext_keyring: bool = False,
    exe: str | None = None,
) -> Plan:
    plan = Plan(action)
    if action == "wrap":
        exe = exe or gatewatch_executable()
        if secrets_to_keyring:
            problem = secrets.keyring_problem(allow_plaintext_keyring)
            if problem:
                plan.notes.append(problem)
                secrets_to_keyring = False
    names: dict[str, str] = {}  # keyring names taken by this plan, across all its files
    for loaded in configs:
        picked = [e for e in loaded.entries if chosen(loaded.config, e)]
        if loaded.error:
            if picked or loaded.config.path.exists():
                plan.skipped.append(Skipped(loaded.config, "*", loaded.error))
            continue
        if not picked or loaded.doc is None:
            continue
        try:
            change = _plan_file(action, loaded, picked, plan,
                                secrets_to_keyring, exe or "", names)
        except (EditError, secrets.KeyringError) as exc:
            plan.skipped.append(Skipped(loaded.config, "*", str(exc)))
            continue
        if change.after != change.before:
            plan.changes.append(change)
    return plan


def _plan_file(action: Action, loaded: LoadedConfig, picked: list[ServerEntry], plan: Plan,
               to_keyring: bool, exe: str, names: dict[str, str]) -> FileChange:
    assert loaded.doc is not None
    config = loaded.config
    editor = Editor(loaded.doc)
    change = FileChange(config, loaded.doc.text, loaded.doc.text, loaded.fingerprint)
    for entry in picked:
        if entry.transport is not Transport.STDIO:
            plan.skipped.append(Skipped(config, entry.name, entry.skip_reason or "not stdio"))
            continue
        if action == "wrap":
            changed = editor.wrap(entry, exe)
            if to_keyring:
                for var, value in entry.env.items():
                    if secrets.looks_secret(var, value):
                        username = _free_username(config.client.id, entry.name, var, value,
                                                  names)
                        editor.set_env(entry, var, secrets.ref_for(username))
                        change.to_store.append((username, value))
                        change.secrets_shown.append(value)
                        change.moved.append(Moved(entry.name, var, username))
                        changed = True
        else:
            restored: list[tuple[str, str, str]] = []
            try:
                for var, value in entry.env.items():
                    if secrets.is_ref(value):
                        username = value[len(secrets.REF_PREFIX):]
                        restored.append((var, username, secrets.fetch(username)))
            except secrets.KeyringError as exc:
                # Unwrapped with a dangling reference, the server would start without its secret.
                plan.skipped.append(Skipped(config, entry.name, f"left wrapped: {exc}"))
                continue
            changed = editor.unwrap(entry)
            for var, username, secret in restored:
                editor.set_env(entry, var, secret)
                change.to_forget.append((username, secret))
                change.secrets_shown.append(secret)
                changed = True
        if changed:
            change.servers.append(entry.name)
    change.after = editor.result()
    return change


def _free_username(client: str, server: str, var: str, value: str,
                   planned: dict[str, str]) -> str:
    """client/server/VAR, or client/server/VAR#n when that name is taken. Never shared, so
    unwrapping one entry (which deletes its secret) cannot break another."""
    import keyring

    base = secrets.username_for(client, server, var)
    candidate, n = base, 1
    while candidate in planned or keyring.get_password(secrets.SERVICE, candidate) is not None:
        n += 1
        candidate = f"{base}#{n}"
    planned[candidate] = value
    return candidate


def apply(plan: Plan) -> Applied:
    done = Applied()
    for change in plan.changes:
        path = change.config.path
        stored: list[str] = []
        try:
            check_unchanged(path, change.fingerprint)
            for username, secret in change.to_store:
                secrets.store(username, secret)
                stored.append(username)
            copy = backup(path, change.config.client.id)
            replace_if_unchanged(path, change.after, change.fingerprint)
        except (OSError, StaleFileError, secrets.KeyringError) as exc:
            for username in stored:  # nothing refers to them
                secrets.forget(username)
            done.failed.append((path, str(exc)))
            continue
        for username, _ in change.to_forget:
            secrets.forget(username)
        done.written.append((path, copy))
        if change.to_store:
            done.plaintext_backups += backups_holding(path, change.config.client.id,
                                                      [value for _, value in change.to_store])
        hint = change.config.client.restart
        if hint:
            line = f"{change.config.client.label}: {hint}"
            if line not in done.restart:
                done.restart.append(line)
    return done


def undo(plan: Plan, done: Applied) -> Applied:
    """Put back exactly what apply() changed: each written file's previous bytes (unless it
    changed again since) and the keyring entries as they were."""
    from proxy.clients.files import fingerprint

    written = {path for path, _ in done.written}
    inverse = Plan(plan.action)
    for change in plan.changes:
        if change.config.path in written:
            inverse.changes.append(FileChange(
                change.config, change.after, change.before,
                fingerprint(change.after.encode("utf-8")), list(change.servers),
                to_store=list(change.to_forget), to_forget=list(change.to_store)))
    return apply(inverse)


def load_all(configs: list[ConfigFile] | None = None) -> list[LoadedConfig]:
    return [load(c) for c in (discover() if configs is None else configs)]


def unwrap_everything() -> Applied:
    """Unwrap every wrapped server in every known config (used by uninstall)."""
    return apply(make_plan("unwrap", load_all()))
