"""`gatewatch` with no arguments: start the tray app, or wake the one already running."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

log = logging.getLogger("gatewatch.app")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="gatewatch", description="Gatewatch tray app")
    parser.add_argument("--show", action="store_true", help="open the window at start")
    args = parser.parse_args(argv)
    from proxy import logs

    logs.configure("app")

    from PySide6.QtWidgets import QApplication

    from app import socket_path
    from app.hub import Hub, HubError, Wake, wake_running_app
    from proxy import __version__, paths

    qt_app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    assert isinstance(qt_app, QApplication)
    qt_app.setApplicationName("Gatewatch")
    qt_app.setDesktopFileName("gatewatch")
    qt_app.setQuitOnLastWindowClosed(False)

    hub = Hub(__version__)
    try:
        serving = hub.listen()
    except (HubError, socket_path.SocketDirError) as exc:
        print(f"gatewatch: {exc}", file=sys.stderr)
        return 1
    if not serving:
        woke = wake_running_app()
        if woke is Wake.WOKEN:
            print("gatewatch: already running; brought its window forward", file=sys.stderr)
            return 0
        if woke is Wake.SILENT:
            print(f"gatewatch: a program accepted the connection on {socket_path.server_name()} "
                  "but did not answer within 10 s: if Gatewatch is running, it is busy; "
                  "not starting a second one", file=sys.stderr)
            return 1
        print(f"gatewatch: another program serves {socket_path.server_name()}", file=sys.stderr)
        return 1

    from app import icons
    from app.application import GatewatchApp, read_settings
    from app.store import open_db
    from app.theme import style_sheet

    qt_app.setWindowIcon(icons.app_icon())
    qt_app.setStyleSheet(style_sheet(qt_app.palette()))
    from proxy.store.schema import SchemaError

    settings, problem = read_settings(paths.settings_path())
    try:
        conn = open_db()
    except (SchemaError, OSError, sqlite3.Error) as exc:
        print(f"gatewatch: cannot open {paths.db_path()}: {exc}", file=sys.stderr)
        hub.close()
        return 1
    gatewatch = GatewatchApp(conn, hub, paths.settings_path(), settings)
    gatewatch.start()
    if problem:
        gatewatch.window.say(problem)
        gatewatch.window.bring_forward()
    if args.show:
        gatewatch.window.bring_forward()
    _quit_on_signals(qt_app)
    try:
        return qt_app.exec()
    finally:
        hub.close()


def _quit_on_signals(qt_app: QObject) -> None:
    """Ctrl+C and SIGTERM quit cleanly (the socket file is removed), even inside Qt's loop."""
    import signal

    from PySide6.QtCore import QCoreApplication, QTimer

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QCoreApplication.quit())
    # Qt's loop runs C++ code; a periodic no-op lets Python run its signal handlers.
    timer = QTimer(qt_app)
    timer.setInterval(300)
    timer.timeout.connect(lambda: None)
    timer.start()
