"""Where Gatewatch keeps its state.

`GATEWATCH_HOME=DIR` puts everything (config, data, runtime socket) under DIR, which tests and
benchmarks always use. Without it, the per-user platform directories from platformdirs.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "gatewatch"


def home_override() -> Path | None:
    value = os.environ.get("GATEWATCH_HOME")
    return Path(value).expanduser().resolve() if value else None


def config_dir() -> Path:
    home = home_override()
    if home is not None:
        return home / "config"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    home = home_override()
    if home is not None:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Rebuildable state (the built detector): deleting it costs one slower start."""
    home = home_override()
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def runtime_dir() -> Path:
    """User-only directory for the local socket (created with mode 0700 by its users)."""
    home = home_override()
    if home is not None:
        return home / "run"
    import platformdirs

    return Path(platformdirs.user_runtime_dir(APP_NAME, appauthor=False))


def db_path() -> Path:
    return data_dir() / "gatewatch.db"


def user_policy_path() -> Path:
    return config_dir() / "policy.yaml"


def settings_path() -> Path:
    return config_dir() / "settings.yaml"


def _bundled(name: str) -> Path:
    # An installed wheel carries packs/ and resources/ under proxy/_data; a checkout has them
    # at the top of the repo.
    here = Path(__file__).resolve().parent
    installed = here / "_data" / name
    return installed if installed.is_dir() else here.parent / name


def packs_dir() -> Path:
    return _bundled("packs")


def resources_dir() -> Path:
    return _bundled("resources")
