"""The audit database is private: data directory 0700, gatewatch.db and its -wal/-shm 0600.

Made so from the first byte (whatever the umask), and tightened when an older Gatewatch left
them readable. Through the real proxy, and through connect() for every other opener.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from proxy.store.schema import connect
from tests.support import GATEWATCH, child_env, upstream

pytestmark = pytest.mark.e2e


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def db_files(db: Path) -> list[Path]:
    return [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]


def run_proxy(db: Path, umask: int = 0o022) -> None:
    """One short real session: `gatewatch run` over the echo upstream, stdin closed at once."""
    done = subprocess.run(
        [*GATEWATCH, "run", "--name", "echo", "--db", str(db), "--", *upstream("relay_echo")],
        input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, timeout=60,
        env=child_env(), preexec_fn=lambda: os.umask(umask),
    )
    assert done.returncode == 0, done.stderr.decode()


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_the_proxy_creates_a_private_database(db_file: Path, umask: int) -> None:
    run_proxy(db_file, umask)
    assert mode(db_file.parent) == 0o700
    found = db_files(db_file)
    assert db_file in found
    assert {p.name: mode(p) for p in found} == {p.name: 0o600 for p in found}


def test_an_old_readable_database_is_tightened_at_start(db_file: Path) -> None:
    db_file.parent.mkdir(mode=0o755)
    db_file.parent.chmod(0o755)
    connect(db_file).close()
    for path in [db_file, Path(f"{db_file}-wal"), Path(f"{db_file}-shm")]:
        path.touch()
        path.chmod(0o644)
    run_proxy(db_file)
    assert mode(db_file.parent) == 0o700
    assert {p.name: mode(p) for p in db_files(db_file)} == {
        p.name: 0o600 for p in db_files(db_file)}
    rows = connect(db_file, readonly=True).execute("SELECT count(*) FROM sessions").fetchone()
    assert rows[0] >= 1  # the tightened database is the same one, still in use


def test_wal_and_shm_follow_the_database(db_file: Path) -> None:
    conn = connect(db_file)
    conn.execute("INSERT INTO server_state (server, paused, updated_at) VALUES ('x', 0, 0)")
    assert Path(f"{db_file}-wal").exists() and Path(f"{db_file}-shm").exists()
    assert {p.name: mode(p) for p in db_files(db_file)} == {
        p.name: 0o600 for p in db_files(db_file)}
    conn.close()


def test_a_db_elsewhere_is_private_but_its_directory_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    db = shared / "audit.db"
    connect(db).close()
    assert mode(shared) == 0o755  # not Gatewatch's directory: not ours to change
    assert mode(db) == 0o600


def test_a_symlinked_database_is_not_chmodded_through_the_link(tmp_path: Path,
                                                               db_file: Path) -> None:
    real = tmp_path / "real.db"
    connect(real).close()
    real.chmod(0o640)
    db_file.parent.mkdir(mode=0o700)
    db_file.symlink_to(real)
    connect(db_file).close()  # opens through the link the user made
    assert mode(real) == 0o640  # the target is the user's business
