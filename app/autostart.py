"""Start at login: an XDG autostart entry made from resources/gatewatch.desktop.in (Linux)."""

from __future__ import annotations

import logging
import os
import shlex
import sys
from pathlib import Path

from proxy import paths

log = logging.getLogger(__name__)


def autostart_file() -> Path:
    home = paths.home_override()
    if home is not None:
        return home / "autostart" / "gatewatch.desktop"
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "autostart" / "gatewatch.desktop"


def desktop_entry(executable: list[str]) -> str:
    template = (paths.resources_dir() / "gatewatch.desktop.in").read_text(encoding="utf-8")
    icon = paths.resources_dir() / "icons" / "gatewatch.svg"
    return template.replace("@EXEC@", shlex.join(executable)).replace("@ICON@", str(icon))


def launcher() -> list[str]:
    """The installed `gatewatch` script beside this Python (what the installer's entry runs),
    else this Python running the package."""
    script = Path(sys.executable).with_name("gatewatch")
    return [str(script)] if script.exists() else [sys.executable, "-m", "proxy"]


def set_enabled(enabled: bool) -> bool:
    """Write or remove the entry; False where this platform is not handled here."""
    if not sys.platform.startswith("linux"):
        log.info("start at login is set up by the installer on %s", sys.platform)
        return False
    path = autostart_file()
    if enabled:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(desktop_entry(launcher()), encoding="utf-8")
    else:
        path.unlink(missing_ok=True)
    return True
