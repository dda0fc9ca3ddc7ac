"""settings.yaml: how Gatewatch asks, how long it waits, what it keeps.

Read by every proxy at start (and on `reload`), read and written by the tray app. A missing
file means the defaults; a malformed one is an error naming the file, the line and the fix,
never silently ignored.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from proxy import paths
from proxy.errors import ConfigFileError

AskVia = Literal["auto", "elicitation", "app", "deny"]

# The proxy tells the app `ask_timeout - DEADLINE_MARGIN_S`, so an answer never comes too late.
DEADLINE_MARGIN_S = 5.0


@dataclass(frozen=True)
class Settings:
    ask_via: AskVia = "auto"  # auto: remembered trust, client elicitation, app, then deny
    ask_timeout: float = 120.0  # seconds the proxy holds a call that waits for a human
    popup_timeout: float = 60.0  # the app's countdown (capped by the proxy's deadline)
    detector: bool = True  # scan tool results for prompt injection
    retention_days: int = 90  # audit events older than this are pruned; 0 keeps everything


class SettingsError(ConfigFileError):
    """settings.yaml cannot be used as written."""


_CHOICES: dict[str, tuple[str, ...]] = {
    "ask_via": get_args(AskVia),
}
_MINIMUM: dict[str, float] = {
    "ask_timeout": DEADLINE_MARGIN_S + 5,
    "popup_timeout": 1,
    "retention_days": 0,
}


def load_settings(path: Path | None = None) -> Settings:
    import yaml

    path = path or paths.settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(path, 0, f"cannot read settings: {exc}") from exc
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        raise SettingsError(path, line, f"not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if root is None:
        return Settings()
    if not isinstance(root, yaml.MappingNode):
        raise SettingsError(
            path, root.start_mark.line + 1, "settings must be a mapping of name: value"
        )
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}
    constructor = yaml.SafeLoader("")
    for key_node, value_node in root.value:
        key = key_node.value
        if key not in fields:
            raise SettingsError(
                path, key_node.start_mark.line + 1,
                f"unknown setting {key!r}; known settings: {', '.join(fields)}",
            )
        value = constructor.construct_object(value_node, deep=True)
        where = (path, value_node.start_mark.line + 1)
        values[key] = _check(key, value, Settings.__annotations__[key], where)
    return Settings(**values)


def _check(key: str, value: Any, annotation: str, where: tuple[Path, int]) -> Any:
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            raise SettingsError(
                *where, f"{key} must be one of {', '.join(_CHOICES[key])}, not {value!r}"
            )
        return value
    if annotation == "bool":
        if not isinstance(value, bool):
            raise SettingsError(*where, f"{key} must be true or false, not {value!r}")
        return value
    wanted = int if annotation == "int" else float
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (wanted is int and not isinstance(value, int))
    ):
        article = "an" if wanted is int else "a"
        raise SettingsError(*where, f"{key} must be {article} {wanted.__name__}, not {value!r}")
    if value < _MINIMUM[key]:
        raise SettingsError(*where, f"{key} must be at least {_MINIMUM[key]:g}, not {value!r}")
    return wanted(value)


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write settings, keeping the user's comments and key order (atomic replace)."""
    import tempfile

    from ruamel.yaml import YAML

    path = path or paths.settings_path()
    yaml = YAML()
    try:
        document = yaml.load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        document = {}
    for name, value in dataclasses.asdict(settings).items():
        document[name] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".yaml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yaml.dump(document, out)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
