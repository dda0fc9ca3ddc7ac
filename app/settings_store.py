"""The app's view of settings.yaml (proxy.paths.settings_path()).

Stand-in until proxy/settings.py lands: same file, same keys; unknown keys are kept on save so
the app never erases what another Gatewatch part wrote there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

ASK_VIA = ("auto", "elicitation", "app", "deny")
DEFAULT_ACTIONS = ("deny", "ask", "allow")


class SettingsError(ValueError):
    """settings.yaml could not be read; the message names the file, line and the fix."""


@dataclass
class AppSettings:
    ask_via: str = "auto"  # auto = trust → elicitation → app → deny
    ask_timeout: int = 120  # the proxy's deadline, seconds
    popup_timeout: int = 60  # popup countdown, seconds; 0 = no countdown
    default_action: str = "deny"  # when no contract fires and no human answers
    detector: bool = True
    retention_days: int = 90
    start_at_login: bool = False


def load(path: Path) -> AppSettings:
    raw = _read(path)
    settings = AppSettings()
    for f in fields(AppSettings):
        if f.name in raw:
            value = raw[f.name]
            expected = type(getattr(settings, f.name))
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise SettingsError(
                    f"{path}: {f.name} must be {expected.__name__}, not {value!r}; "
                    "fix it in the file or in Gatewatch → Settings"
                )
            setattr(settings, f.name, value)
    return settings


def save(path: Path, settings: AppSettings) -> None:
    import yaml

    raw = _read(path) if path.exists() else {}
    raw.update(asdict(settings))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    tmp.replace(path)


def _read(path: Path) -> dict[str, Any]:
    import yaml

    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}" if mark is not None else "unknown line"
        raise SettingsError(f"{path}: {line}: {exc.problem}; fix the YAML syntax") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: line 1: expected a mapping of setting: value")
    return data
