"""Where the socket lives, and the checks that keep other users away from it."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from proxy import paths
from proxy.errors import GatewatchError

SOCKET_NAME = "gatewatch.sock"
# sun_path is 108 bytes on Linux and 104 on macOS; stay under both.
MAX_SOCKET_PATH = 103


class SocketDirError(GatewatchError, RuntimeError):
    """The socket directory is missing, shared with other users, or the path is unusable."""


class NotASocket(SocketDirError):
    """Something that is not a socket sits at the socket path: it is left alone."""


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def existing_socket(path: Path) -> bool:
    """True when a socket of ours is at `path`, False when nothing is; NotASocket otherwise.

    lstat, never stat: a symbolic link is refused whatever it points to, so nothing that binds
    or cleans up the socket ever follows one out of the private directory.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISSOCK(st.st_mode):
        if st.st_uid != os.getuid():
            raise NotASocket(f"the socket {path} belongs to uid {st.st_uid}, not to you")
        return True
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a socket")
    raise NotASocket(
        f"{path} is {kind}, not a socket: Gatewatch leaves it alone. Move it away "
        "(or set GATEWATCH_HOME elsewhere) and start again"
    )


def remove_stale_socket(path: Path) -> None:
    """Unlink a socket nobody accepts on (left by a crash), only if it still is a socket."""
    if existing_socket(path):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def socket_path() -> Path:
    return paths.runtime_dir() / SOCKET_NAME


def secure_socket_dir(create: bool = True) -> Path:
    """The socket's directory, created 0700 if asked; refuses one other users can reach."""
    directory = paths.runtime_dir()
    if create:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private_dir(directory)
    path = directory / SOCKET_NAME
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise SocketDirError(
            f"socket path {path} is longer than {MAX_SOCKET_PATH} bytes: "
            "set GATEWATCH_HOME to a shorter directory"
        )
    return path


def check_private_dir(directory: Path) -> None:
    try:
        st = directory.stat()
    except FileNotFoundError:
        raise SocketDirError(f"socket directory {directory} does not exist") from None
    if not stat.S_ISDIR(st.st_mode):
        raise SocketDirError(f"{directory} is not a directory")
    if st.st_uid != os.getuid():
        raise SocketDirError(
            f"socket directory {directory} belongs to uid {st.st_uid}, not to you "
            f"(uid {os.getuid()}): remove it or set GATEWATCH_HOME"
        )
    if st.st_mode & 0o077:
        raise SocketDirError(
            f"socket directory {directory} has mode {stat.S_IMODE(st.st_mode):03o}, "
            f"open to other users: run `chmod 700 {directory}`"
        )
