"""Checks of Gatewatch's own state: the audit database and the socket directory."""

from __future__ import annotations

import os
import socket
import sqlite3
import stat
import sys
from pathlib import Path

from proxy import paths
from proxy.doctor.report import CheckResult, Status


def check_database() -> list[CheckResult]:
    from proxy.store.database import Database
    from proxy.store.schema import SCHEMA_VERSION, SchemaError

    path = paths.db_path()
    existed = path.exists()
    try:
        db = Database.open(path)
    except SchemaError as exc:
        return [CheckResult("database", Status.FAIL, f"{path}: {exc}", "upgrade Gatewatch")]
    except (sqlite3.Error, OSError) as exc:
        return [
            CheckResult(
                "database", Status.FAIL, f"{path}: cannot open: {exc}",
                f"check that {path.parent} exists and is writable by you",
            )
        ]
    try:
        version = db.schema_version()
        problems = db.quick_check()
        db.probe_write_lock()
    except sqlite3.Error as exc:
        return [
            CheckResult(
                "database", Status.FAIL, f"{path}: {exc}",
                "another process may hold the write lock, or the file is read-only",
            )
        ]
    finally:
        db.close()
    if problems != ["ok"]:
        return [
            CheckResult(
                "database", Status.FAIL, f"{path}: quick_check: {'; '.join(problems[:3])}",
                "the audit log is damaged: move it aside; Gatewatch starts a new one",
            )
        ]
    created = "" if existed else ", created now"
    summary = f"{path} writable, schema v{version}/{SCHEMA_VERSION}, quick_check ok{created}"
    return [CheckResult("database", Status.OK, summary)]


def check_socket_dir() -> list[CheckResult]:
    if sys.platform == "win32":
        return [CheckResult("socket-dir", Status.OK, "named pipe (no directory on Windows)")]
    from proxy.ipc import address

    directory = paths.runtime_dir()
    try:
        if directory.exists():
            socket_path = address.secure_socket_dir(create=False)
            address.existing_socket(socket_path)  # NotASocket: something else squats the path
        else:
            socket_path = directory / address.SOCKET_NAME
            if len(os.fsencode(socket_path)) > address.MAX_SOCKET_PATH:
                raise address.SocketDirError(
                    f"socket path {socket_path} is longer than {address.MAX_SOCKET_PATH} "
                    "bytes: set GATEWATCH_HOME to a shorter directory"
                )
    except address.SocketDirError as exc:
        return [CheckResult("socket-dir", Status.FAIL, str(exc),
                            "proxies cannot reach the tray app until this is fixed")]
    if not directory.exists():
        return [
            CheckResult("socket-dir", Status.OK, f"{directory} not created yet (made 0700 on use)")
        ]
    mode = stat.S_IMODE(directory.stat().st_mode)
    return [CheckResult("socket-dir", Status.OK, f"{directory} mode {mode:04o}, "
                        f"{_app_state(socket_path)}")]


def _app_state(socket_path: Path) -> str:
    if not socket_path.exists():
        return "tray app not running"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(socket_path))
        except OSError:
            return "stale socket file (the tray app replaces it when it starts)"
    return "tray app running"
