"""Path confinement: is a path argument inside one of the allowed directories?

Resolves the way the filesystem will: `~`, relative paths (against the proxy's working
directory, which the upstream inherits), Windows separators, `.`/`..`, and symlinks in every
existing component, so a link inside an allowed directory that points outside is caught.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def resolve(path: str, base: Path | None = None) -> str:
    """The real absolute path a server would touch for this argument."""
    text = path.strip()
    if text.startswith("file://"):
        text = text[7:]
    if os.sep == "/":
        # A backslash is a separator to Windows-minded servers (and to Node's path.win32);
        # treating it as one here can only make the check stricter.
        text = text.replace("\\", "/")
    text = os.path.expanduser(text)
    if not os.path.isabs(text):
        text = os.path.join(str(base) if base is not None else os.getcwd(), text)
    return os.path.realpath(os.path.normpath(text))


def allowed_roots(prefixes: tuple[str, ...], base: Path | None = None) -> tuple[str, ...]:
    return tuple(resolve(prefix, base) for prefix in prefixes)


def inside(path: str, roots: tuple[str, ...], base: Path | None = None) -> bool:
    """True when path resolves to one of roots or below it."""
    if "\x00" in path or (os.sep == "/" and _DRIVE.match(path.strip())):
        return False  # a drive-letter path has no meaning on this system: refuse it
    real = resolve(path, base)
    for root in roots:
        try:
            if os.path.commonpath([real, root]) == root:
                return True
        except ValueError:  # different drives on Windows
            continue
    return False
