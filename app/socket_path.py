"""Whether someone already serves the local socket (docs/ipc.md, Transport). No Qt.

Runs before the app decides whether to serve or to wake the running one. The path and the
directory checks are the proxy side's (proxy.ipc.address), so both ends agree on them.
"""

from __future__ import annotations

import getpass
import socket
import sys
from pathlib import Path

from proxy.ipc import address

SocketDirError = address.SocketDirError


def server_name() -> str:
    """What QLocalServer.listen() takes: a file path on Unix, a pipe name on Windows."""
    if sys.platform == "win32":
        return f"gatewatch-{getpass.getuser()}"
    return str(address.socket_path())


def prepare() -> Path | None:
    """Create the socket directory 0700 and refuse one others can reach (Unix only)."""
    return None if sys.platform == "win32" else address.secure_socket_dir(create=True)


def someone_serves(timeout_s: float = 1.0) -> bool:
    """True when a live server accepts on the socket; a stale socket (from a crash) is removed.
    Anything at the path that is not a socket raises address.NotASocket and is left alone."""
    if sys.platform == "win32":
        return Path(rf"\\.\pipe\{server_name()}").exists()
    path = address.socket_path()
    if not address.existing_socket(path):
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout_s)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        address.remove_stale_socket(path)
        return False
    except TimeoutError:
        return True  # too busy to accept is still a server
    finally:
        probe.close()
    return True
