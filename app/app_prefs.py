"""Preferences only the tray app reads (config_dir()/app.yaml), kept out of settings.yaml,
whose loader refuses keys the proxy does not know."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from proxy import paths


@dataclass
class AppPrefs:
    countdown: bool = True  # popup counts down to a deny; off = wait for the proxy's deadline


def prefs_path() -> Path:
    return paths.config_dir() / "app.yaml"


def load(path: Path | None = None) -> AppPrefs:
    """Unreadable or odd values fall back to the defaults: these are comfort, not policy."""
    import yaml

    path = path or prefs_path()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return AppPrefs()
    prefs = AppPrefs()
    if isinstance(raw, dict) and isinstance(raw.get("countdown"), bool):
        prefs.countdown = raw["countdown"]
    return prefs


def save(prefs: AppPrefs, path: Path | None = None) -> None:
    import yaml

    path = path or prefs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(asdict(prefs)), encoding="utf-8")
    tmp.replace(path)
