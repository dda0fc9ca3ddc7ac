"""Whatever sits at the socket path and is not a socket is refused and left alone.

By `gatewatch approve` (a real process), by the asyncio SocketServer, by the tray app's checks
and by the tray app itself (a real process). A stale socket from a crash is still replaced.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app import socket_path as app_socket
from proxy.ipc.address import NotASocket, existing_socket, secure_socket_dir
from proxy.ipc.server import SocketServer
from tests.support import GATEWATCH, Approver, child_env, serve

pytestmark = pytest.mark.e2e


def regular_file(path: Path, elsewhere: Path) -> str:
    path.write_text("my notes, not a socket\n")
    return "a regular file"


def directory(path: Path, elsewhere: Path) -> str:
    path.mkdir()
    (path / "inside.txt").write_text("keep me")
    return "a directory"


def link_to_file(path: Path, elsewhere: Path) -> str:
    target = elsewhere / "target.txt"
    target.write_text("the link's target")
    path.symlink_to(target)
    return "a symbolic link"


def link_to_directory(path: Path, elsewhere: Path) -> str:
    path.symlink_to(elsewhere)
    return "a symbolic link"


def dangling_link(path: Path, elsewhere: Path) -> str:
    path.symlink_to(elsewhere / "does-not-exist")
    return "a symbolic link"


def link_to_a_socket_elsewhere(path: Path, elsewhere: Path) -> str:
    other = socket.socket(socket.AF_UNIX)
    other.bind(str(elsewhere / "s"))  # a dead socket outside the private directory
    other.close()
    path.symlink_to(elsewhere / "s")
    return "a symbolic link"


def named_pipe(path: Path, elsewhere: Path) -> str:
    os.mkfifo(path)
    return "a named pipe"


SQUATTERS: list[Callable[[Path, Path], str]] = [
    regular_file, directory, link_to_file, link_to_directory, dangling_link,
    link_to_a_socket_elsewhere, named_pipe,
]


def snapshot(path: Path, elsewhere: Path) -> tuple[object, ...]:
    """What is at the path and behind it, to prove nothing was touched."""
    st = os.lstat(path)
    inside = sorted((p.name, p.read_text()) for p in path.iterdir()) if path.is_dir() and (
        not path.is_symlink()) else None
    behind = sorted(p.name for p in elsewhere.iterdir())
    text = path.read_text() if path.is_file() else None
    return st.st_ino, st.st_mode, os.readlink(path) if path.is_symlink() else None, inside, \
        behind, text


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    out = tmp_path / "elsewhere"
    out.mkdir()
    return out


@pytest.mark.parametrize("squat", SQUATTERS, ids=lambda f: f.__name__)
def test_approve_refuses_and_leaves_it_alone(squat: Callable[[Path, Path], str],
                                             elsewhere: Path) -> None:
    path = secure_socket_dir()
    kind = squat(path, elsewhere)
    before = snapshot(path, elsewhere)
    approver = Approver("--auto", "allow")
    assert approver.proc.wait(30) == 1
    (line,) = approver.wait_for("gatewatch approve:")
    assert f"{path} is {kind}, not a socket" in line and "leaves it alone" in line
    assert snapshot(path, elsewhere) == before


@pytest.mark.parametrize("squat", [regular_file, directory, link_to_file],
                         ids=lambda f: f.__name__)
async def test_socket_server_refuses(squat: Callable[[Path, Path], str], elsewhere: Path) -> None:
    path = secure_socket_dir()
    squat(path, elsewhere)
    before = snapshot(path, elsewhere)

    async def never(message: dict[str, object]) -> None:
        return None

    with pytest.raises(NotASocket, match="not a socket"):
        await SocketServer(never).start()
    assert snapshot(path, elsewhere) == before


@pytest.mark.parametrize("squat", [regular_file, directory, dangling_link],
                         ids=lambda f: f.__name__)
def test_the_apps_check_refuses(squat: Callable[[Path, Path], str], elsewhere: Path) -> None:
    path = secure_socket_dir()
    squat(path, elsewhere)
    before = snapshot(path, elsewhere)
    with pytest.raises(app_socket.SocketDirError, match="not a socket"):
        app_socket.someone_serves()
    assert snapshot(path, elsewhere) == before


def test_the_app_refuses_to_start_over_a_file(elsewhere: Path) -> None:
    path = secure_socket_dir()
    regular_file(path, elsewhere)
    env = child_env({"QT_QPA_PLATFORM": "offscreen"})
    done = subprocess.run([*GATEWATCH], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"{path} is a regular file, not a socket" in done.stderr
    assert path.read_text() == "my notes, not a socket\n"


def stale(path: Path) -> None:
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # bound, never listening: what a crashed app leaves behind
    dead.close()


def test_a_stale_socket_is_still_replaced_by_the_apps_check() -> None:
    path = secure_socket_dir()
    stale(path)
    assert existing_socket(path)
    assert app_socket.someone_serves() is False
    assert not os.path.lexists(path)


async def test_a_stale_socket_is_still_replaced_by_the_socket_server() -> None:
    path = secure_socket_dir()
    stale(path)

    async def never(message: dict[str, object]) -> None:
        return None

    server = SocketServer(never)
    assert await server.start() == path
    try:
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(str(path))  # the stale one refused; the new server accepts
        probe.close()
    finally:
        await server.close()
    assert not os.path.lexists(path)


def test_nothing_there_serves_normally(approvers: list[Approver]) -> None:
    serve(approvers, "--auto", "allow")
    assert existing_socket(secure_socket_dir())


def test_doctor_names_what_squats_the_socket_path(elsewhere: Path) -> None:
    path = secure_socket_dir()
    directory(path, elsewhere)
    done = subprocess.run([*GATEWATCH, "doctor"], env=child_env(), capture_output=True,
                          text=True, timeout=120)
    assert f"{path} is a directory, not a socket" in done.stdout + done.stderr
    assert (path / "inside.txt").read_text() == "keep me"
