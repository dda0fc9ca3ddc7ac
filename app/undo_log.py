"""The Clients tab's undo history, kept on disk beside the backups so it survives a restart.

A record holds no secret: each written file's path, the backup copy taken just before the
write, the fingerprint of what was written (undo refuses a file that changed since), the
keyring names the change created, and the names (with server and variable) it deleted, whose
values are read back from the file itself when undoing. No Qt.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from proxy.clients import changes
from proxy.clients.discovery import ConfigFile, discover, load
from proxy.clients.files import backups_dir, fingerprint

KEEP = 10


@dataclass
class FileRecord:
    path: str
    client: str
    backup: str
    written_fingerprint: str
    servers: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # keyring names the change created
    forgotten: list[list[str]] = field(default_factory=list)  # [name, server, variable]


@dataclass
class UndoRecord:
    action: str
    files: list[FileRecord]


def log_path() -> Path:
    return backups_dir() / "undo.json"


def load_records() -> list[UndoRecord]:
    try:
        raw = json.loads(log_path().read_text(encoding="utf-8"))
        return [UndoRecord(r["action"], [FileRecord(**f) for f in r["files"]]) for r in raw]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _save(records: list[UndoRecord]) -> None:
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(r) for r in records[-KEEP:]], indent=1), encoding="utf-8")
    os.replace(tmp, path)


def record(plan: changes.Plan, done: changes.Applied) -> None:
    backups = dict(done.written)
    files = []
    for change in plan.changes:
        copy = backups.get(change.config.path)
        if copy is None:
            continue
        forgotten = []
        for username, _secret in change.to_forget:
            _client, server, var = ([*username.split("#")[0].split("/", 2), "", ""])[:3]
            forgotten.append([username, server, var])
        files.append(FileRecord(
            str(change.config.path), change.config.client.id, str(copy),
            fingerprint(change.after.encode("utf-8")), list(change.servers),
            [u for u, _ in change.to_store], forgotten))
    if files:
        _save([*load_records(), UndoRecord(plan.action, files)])


def latest() -> UndoRecord | None:
    records = load_records()
    return records[-1] if records else None


def undo_latest() -> changes.Applied:
    """Put back the files of the latest record exactly as they were (and its keyring names)."""
    records = load_records()
    if not records:
        return changes.Applied()
    rec = records.pop()
    plan, done = _rebuild(rec)
    result = changes.undo(plan, done)
    result.failed.extend(_missing(rec, plan))
    _save(records)
    return result


def _rebuild(rec: UndoRecord) -> tuple[changes.Plan, changes.Applied]:
    configs = {c.path.absolute(): c for c in discover()}
    plan = changes.Plan(rec.action)  # type: ignore[arg-type]
    done = changes.Applied()
    for f in rec.files:
        path = Path(f.path)
        config = configs.get(path.absolute())
        try:
            before = Path(f.backup).read_bytes().decode("utf-8")  # CRLF stays CRLF
            current = path.read_bytes()
        except OSError:
            continue
        if config is None or fingerprint(current) != f.written_fingerprint:
            continue  # changed since (or gone): changes.undo must not touch it
        after = current.decode("utf-8")
        change = changes.FileChange(config, before, after, fingerprint(before.encode("utf-8")),
                                    list(f.servers))
        change.to_store = [(name, "") for name in f.stored]  # undo only deletes these
        change.to_forget = _secrets_back(config, f.forgotten)
        plan.changes.append(change)
        done.written.append((path, Path(f.backup)))
    return plan, done


def _secrets_back(config: ConfigFile, forgotten: list[list[str]]) -> list[tuple[str, str]]:
    """The values an unwrap put back into the file, to store in the keyring again."""
    if not forgotten:
        return []
    loaded = load(config)
    env: dict[str, dict[str, str]] = {e.name: e.env for e in loaded.entries}
    out = []
    for name, server, var in forgotten:
        value = env.get(server, {}).get(var)
        if value:
            out.append((name, value))
    return out


def _missing(rec: UndoRecord, plan: changes.Plan) -> list[tuple[Path, str]]:
    rebuilt = {c.config.path for c in plan.changes}
    return [(Path(f.path), "it changed since (or its backup is gone); left as it is")
            for f in rec.files if Path(f.path) not in rebuilt]


def describe(rec: UndoRecord) -> str:
    servers = sorted({s for f in rec.files for s in f.servers})
    verb = "protecting" if rec.action == "wrap" else "unprotecting"
    return f"Undo {verb} {', '.join(servers) or 'servers'}"


