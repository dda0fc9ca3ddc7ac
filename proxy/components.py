"""Build the proxy's decision components (engine, detector) from packs, policy and settings.

Runs in a worker thread after the upstream has been spawned, so loading YAML and compiling rules
overlaps the upstream's own start-up instead of delaying the client's first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any


class ComponentError(RuntimeError):
    """A policy, pack or setting is malformed; the message names file, line and reason."""


def load_components(
    server: str,
    session_id: str,
    db_path: Path,
    policy_path: Path | None,
    write: Callable[[str, tuple[Any, ...]], None],
) -> tuple[Any, Any, Any]:
    """(engine, detector or None, settings)."""
    from proxy.detector import DetectorConfig, PackError, load_detector
    from proxy.engine import Engine, PolicyError
    from proxy.settings import SettingsError, load_settings
    from proxy.store.schema import connect

    try:
        settings = load_settings()
        # The user's detector.yaml (mode, budget, classifier, extra rules) applies here too; the
        # app's on/off switch in settings.yaml and `enabled` in detector.yaml must both be on.
        config = replace(DetectorConfig.load(), db_path=db_path)
        detector = load_detector(config) if settings.detector and config.enabled else None
        scanner = _text_scanner(detector) if detector is not None else None
        engine = Engine.create(
            server,
            session_id,
            connect(db_path),
            policy_path=policy_path,
            write=write,
            text_scanner=scanner,
        )
    except (PolicyError, PackError, SettingsError) as exc:
        raise ComponentError(str(exc)) from exc
    return engine, detector, settings


def paused_in_db(db_path: Path, server: str) -> bool:
    """The app's pause switch, for a proxy that starts while the app is closed: this server's
    row, or the `*` row that pauses every server."""
    from proxy.store.schema import connect

    conn = connect(db_path)
    try:
        row = conn.execute(
            "SELECT MAX(paused) FROM server_state WHERE server IN (?, '*')", (server,)
        ).fetchone()
    finally:
        conn.close()
    return bool(row and row[0])


def _text_scanner(detector: Any) -> Callable[[str], tuple[bool, list[str], str]]:
    def scan(text: str) -> tuple[bool, list[str], str]:
        inspection = detector.scan_text(text)
        return inspection.verdict == "block", list(inspection.rules), inspection.reason

    return scan
