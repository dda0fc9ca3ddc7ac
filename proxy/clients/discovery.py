"""Find the MCP client config files on this machine, and the ones the user added by path."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from proxy import paths
from proxy.clients.catalog import CLIENTS, Client, project_config_paths, user_config_paths
from proxy.clients.document import Document, plain_data
from proxy.clients.edits import Format
from proxy.clients.entries import ServerEntry, read_entries
from proxy.clients.files import read_text
from proxy.clients.nodes import ConfigSyntaxError
from proxy.errors import InvalidValue

_SUFFIX_FORMAT: dict[str, Format] = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


@dataclass(frozen=True)
class ConfigFile:
    client: Client
    path: Path
    scope: str  # "user", "project" or "added"
    fmt: Format


@dataclass
class LoadedConfig:
    config: ConfigFile
    entries: list[ServerEntry] = field(default_factory=list)
    doc: Document | None = None
    fingerprint: str = ""
    error: str | None = None


def added_paths_file() -> Path:
    return paths.config_dir() / "clients.json"


def added_paths() -> list[Path]:
    try:
        data = json.loads(added_paths_file().read_text("utf-8"))
    except FileNotFoundError:
        return []
    except ValueError as exc:
        raise InvalidValue(
            f"{added_paths_file()}: not valid JSON ({exc}); fix or delete it") from None
    return [Path(p) for p in data.get("added", []) if isinstance(p, str)]


def add_path(path: Path) -> ConfigFile:
    """Remember a config file with the common `mcpServers` shape; it must parse."""
    path = path.expanduser().absolute()
    config = _added(path)
    load(config, must_exist=True)
    known = added_paths()
    if path not in known:
        _save_added([*known, path])
    return config


def forget_path(path: Path) -> bool:
    path = path.expanduser().absolute()
    known = added_paths()
    if path not in known:
        return False
    _save_added([p for p in known if p != path])
    return True


def _save_added(items: list[Path]) -> None:
    target = added_paths_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"added": [str(p) for p in items]}, indent=2) + "\n", "utf-8")
    os.replace(tmp, target)


def _added(path: Path) -> ConfigFile:
    """A file the user named: read as the client whose file name it has (a `.claude.json`
    from another CLAUDE_CONFIG_DIR keeps its project servers), else the common shape."""
    if path.name == ".claude.json":
        return ConfigFile(CLIENTS["claude-code"], path, "added", "json")
    return ConfigFile(CLIENTS["custom"], path, "added", _SUFFIX_FORMAT.get(path.suffix, "json"))


def config_for_path(path: Path) -> ConfigFile:
    return _added(path.expanduser().absolute())


def discover(home: Path | None = None, projects: Iterable[Path] = ()) -> list[ConfigFile]:
    """Every known config file: per-user ones, those of known projects (Claude Code's project
    list plus `projects`), and the ones added by path. HOME is read at call time."""
    home = Path.home() if home is None else home
    found: list[ConfigFile] = []
    user_files = user_config_paths(home)
    for client_id, path in user_files:
        client = CLIENTS[client_id]
        found.append(ConfigFile(client, path, "user", client.fmt))
    where = dict(user_files)
    # Projects Claude Code knows (its local-scope servers are read from .claude.json itself)
    # and folders Gemini CLI ran in (project scope is where `gemini mcp add` writes).
    known = [*_project_keys(where["claude-code"]),
             *_project_keys(where["gemini"].parent / "projects.json")]
    for project in [*known, *projects]:
        for client_id, path in project_config_paths(Path(project)):
            client = CLIENTS[client_id]
            found.append(ConfigFile(client, path, "project", client.fmt))
    found += [_added(p) for p in added_paths()]
    seen: set[Path] = set()
    out = []
    for config in found:
        key = config.path.absolute()
        if key in seen or not config.path.is_file():
            continue
        seen.add(key)
        out.append(config)
    return out


def _project_keys(path: Path) -> list[Path]:
    """The absolute paths that key the `projects` object of a client's JSON file."""
    try:
        data = plain_data(read_text(path)[0], "json")
    except (OSError, ValueError):
        return []
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return []
    return [Path(key) for key in projects if Path(key).is_absolute()]


def load(config: ConfigFile, must_exist: bool = False) -> LoadedConfig:
    """Parse one file and read its entries; a broken file comes back with `error` set."""
    try:
        text, fp = read_text(config.path)
    except FileNotFoundError:
        if must_exist:
            raise
        return LoadedConfig(config, error="file not found")
    except (OSError, UnicodeDecodeError) as exc:
        return LoadedConfig(config, error=f"cannot read {config.path}: {exc}")
    try:
        doc = Document.parse(text, config.fmt, str(config.path))
    except ConfigSyntaxError as exc:
        if must_exist:
            raise
        return LoadedConfig(config, error=str(exc))
    return LoadedConfig(config, read_entries(doc, config.client.shape), doc, fp)
