"""Checks of Gatewatch's own state: the audit database and the socket directory."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys

from proxy import paths
from proxy.doctor.report import CheckResult, Status


def check_database() -> list[CheckResult]:
    from proxy.store.schema import SCHEMA_VERSION, SchemaError, connect

    path = paths.db_path()
    existed = path.exists()
    try:
        conn = connect(path)
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
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        # Take the write lock and give it back: proves the file is writable right now.
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return [
            CheckResult(
                "database", Status.FAIL, f"{path}: {exc}",
                "another process may hold the write lock, or the file is read-only",
            )
        ]
    finally:
        conn.close()
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
    directory = paths.runtime_dir()
    if sys.platform == "win32":
        return [CheckResult("socket-dir", Status.OK, "named pipe (no directory on Windows)")]
    if not directory.exists():
        return [
            CheckResult("socket-dir", Status.OK, f"{directory} not created yet (made 0700 on use)")
        ]
    info = directory.stat()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.getuid():
        return [
            CheckResult(
                "socket-dir", Status.FAIL, f"{directory} is owned by uid {info.st_uid}, not you",
                f"remove it (proxies and the app refuse to use it): rm -r {directory}",
            )
        ]
    if mode & 0o077:
        return [
            CheckResult(
                "socket-dir", Status.FAIL, f"{directory} has mode {mode:04o}: others can reach it",
                f"chmod 700 {directory}",
            )
        ]
    socket = directory / "gatewatch.sock"
    app = "tray app socket present" if socket.exists() else "tray app not running"
    return [CheckResult("socket-dir", Status.OK, f"{directory} mode {mode:04o}, {app}")]
