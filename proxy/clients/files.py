"""Reading and writing client config files: fingerprints, backups, atomic replacement."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from proxy import paths
from proxy.errors import GatewatchError

KEEP_RECENT = 5


class StaleFileError(GatewatchError, RuntimeError):
    """The file changed after the preview was made; it is left alone."""


def read_text(path: Path) -> tuple[str, str]:
    """The file's text (exact: no newline translation) and a fingerprint of its bytes."""
    data = path.read_bytes()
    return data.decode("utf-8"), fingerprint(data)


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def backups_dir() -> Path:
    return paths.data_dir() / "backups"


def _backup_folder(path: Path, client: str) -> Path:
    return backups_dir() / client / re.sub(r"[^A-Za-z0-9._-]+", "_",
                                           str(path.absolute()).strip("/\\"))


def backups_holding(path: Path, client: str, values: list[str]) -> list[Path]:
    """The backup copies of a config file that contain any of these values (the plaintext of
    secrets that have since moved to the keyring)."""
    folder = _backup_folder(path, client)
    if not folder.is_dir():
        return []
    needles = [v.encode("utf-8") for v in values if v]
    return [copy for copy in sorted(folder.iterdir())
            if copy.is_file() and any(n in copy.read_bytes() for n in needles)]


def backup(path: Path, client: str) -> Path:
    """Copy the file to data_dir()/backups/<client>/<its path>/<time>-<name> before it is
    changed, and return the copy. Kept: the first copy (the file as it was before Gatewatch
    ever changed it) and the KEEP_RECENT latest."""
    folder = _backup_folder(path, client)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(backups_dir(), 0o700)  # copies hold secrets the user may move to the keyring
    target = folder / f"{datetime.now():%Y%m%d-%H%M%S-%f}-{path.name}"  # sorts by time
    shutil.copy2(path, target)
    copies = sorted(folder.iterdir())
    for old in copies[1:-KEEP_RECENT]:
        old.unlink()
    return target


def check_unchanged(path: Path, expected: str) -> None:
    """Raise StaleFileError unless the file's bytes still match the preview's fingerprint."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StaleFileError(f"{path} no longer exists; nothing was written") from None
    if fingerprint(data) != expected:
        raise StaleFileError(
            f"{path} changed since the preview (the client may have rewritten it); "
            "nothing was written: look at the preview again")


def replace_if_unchanged(path: Path, text: str, expected: str) -> None:
    """Write text to path atomically (temp file + rename, same mode), unless the file's bytes
    no longer match the fingerprint taken at the preview. A symlinked config (dotfiles) stays
    a symlink: its target is what gets replaced."""
    path = path.resolve()
    check_unchanged(path, expected)
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".gatewatch", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
