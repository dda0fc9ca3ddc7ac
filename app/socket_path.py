"""Where the local socket lives and whether someone already serves it (docs/ipc.md, Transport).

No Qt: the checks run before the app decides whether to start or to wake the running one.
"""

from __future__ import annotations

import getpass
import os
import socket
import stat
import sys
from pathlib import Path

from proxy import paths


class SocketDirError(RuntimeError):
    """The runtime directory is unsafe (shared with others); the message says how to fix it."""


def server_name() -> str:
    """What QLocalServer.listen() takes: a file path on Unix, a pipe name on Windows."""
    if sys.platform == "win32":
        return f"gatewatch-{getpass.getuser()}"
    return str(socket_file())


def socket_file() -> Path:
    return paths.runtime_dir() / "gatewatch.sock"


def prepare_dir() -> None:
    """Create the runtime dir 0700; refuse one that others can reach."""
    if sys.platform == "win32":
        return
    directory = paths.runtime_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.stat()
    if info.st_uid != os.getuid():
        raise SocketDirError(
            f"{directory} belongs to another user; remove it or set GATEWATCH_HOME"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise SocketDirError(
            f"{directory} is accessible to other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run `chmod 700 {directory}`"
        )


def someone_serves(timeout_s: float = 1.0) -> bool:
    """True when a live server accepts on the socket; a stale file (from a crash) is removed."""
    if sys.platform == "win32":
        return _pipe_exists()
    path = socket_file()
    if not path.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout_s)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)
        return False
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _pipe_exists() -> bool:
    return Path(rf"\\.\pipe\{server_name()}").exists()
