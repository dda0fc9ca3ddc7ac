"""Build the proxy's decision components (engine, detector) from packs, policy and settings.

Runs in a worker thread after the upstream has been spawned, so loading YAML and compiling rules
overlaps the upstream's own start-up instead of delaying the client's first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.store.database import Write

from proxy.errors import GatewatchError


class ComponentError(GatewatchError, RuntimeError):
    """A policy, pack or setting is malformed; the message names file, line and reason."""


def load_components(
    server: str,
    session_id: str,
    db_path: Path,
    policy_path: Path | None,
    write: Write,
) -> tuple[Any, Any, Any]:
    """(engine, detector or None, settings)."""
    from proxy.detector import PackError
    from proxy.engine import Engine, PolicyError
    from proxy.settings import SettingsError, load_settings
    from proxy.store.database import Database

    try:
        settings = load_settings()
        detector = user_detector(db_path) if settings.detector else None
        engine = Engine.create(
            server,
            session_id,
            Database.open(db_path, write=write),
            policy_path=policy_path,
            **scanners(detector),
        )
    except (PolicyError, PackError, SettingsError) as exc:
        raise ComponentError(str(exc)) from exc
    return engine, detector, settings


def paused_in_db(db_path: Path, server: str) -> bool:
    """The app's pause switch, for a proxy that starts while the app is closed: this server's
    row, or the `*` row that pauses every server."""
    from proxy.store.database import Database

    db = Database.open(db_path)
    try:
        return db.server_state.is_paused(server)
    finally:
        db.close()


def user_detector(db_path: Path | None = None) -> Any:
    """The detector as the user configured it (detector.yaml), or None when it is turned off
    there. Raises PackError naming file and line for a malformed pack or file."""
    from proxy.detector import DetectorConfig, load_detector
    from proxy.detector_cache import cached_detector

    config = DetectorConfig.load()
    if db_path is not None:
        config = replace(config, db_path=db_path)
    return cached_detector(config, load_detector) if config.enabled else None


def text_scanner(detector: Any) -> Callable[[str], tuple[bool, list[str], str]]:
    """The detector as the engine's scanner for arguments and tool descriptions."""

    def scan(text: str) -> tuple[bool, list[str], str]:
        inspection = detector.scan_text(text)
        return inspection.verdict == "block", list(inspection.rules), inspection.reason

    return scan


def argument_scanner(detector: Any) -> Callable[[str, dict[str, Any]], tuple[bool, list[str], str]]:
    """The detector's shell and path rules over a call's arguments (decision step 5)."""

    def scan(tool: str, arguments: dict[str, Any]) -> tuple[bool, list[str], str]:
        inspection = detector.inspect_arguments(tool, arguments)
        return inspection.verdict == "block", list(inspection.rules), inspection.reason

    return scan


def scanners(detector: Any) -> dict[str, Any]:
    """Engine keyword arguments for a detector (none when the detector is off)."""
    if detector is None:
        return {}
    return {"text_scanner": text_scanner(detector), "argument_scanner": argument_scanner(detector)}
