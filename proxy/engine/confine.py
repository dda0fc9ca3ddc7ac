"""Path confinement: is a path argument inside one of the allowed directories?

Resolves the way the file system will: `~`, relative paths (against the proxy's working
directory, which the upstream inherits), Windows separators, `file:` URIs, and symlinks in
every existing component *before* `..` is applied, as the kernel does: with `deep` a link to
`outside/d1/d2`, `allowed/deep/../s.txt` is `outside/d1/s.txt`, not `allowed/s.txt`. A server
that collapses `..` first (Node's `path.resolve`) would open the other file, so both readings
must be inside the allowed roots.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_FILE_URI = re.compile(r"^file:(//(localhost)?)?(?=/)", re.IGNORECASE)
# A string that starts the way a path does: /x, ~/x, ./x, ../x, C:\x, file:/x.
_PATHLIKE = re.compile(r"^(?:/[^/\s]|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[\\/]|file:)", re.IGNORECASE)


def _text(path: str, base: Path | None) -> str:
    text = path.strip()
    uri = _FILE_URI.match(text)
    if uri is not None:
        text = unquote(text[uri.end():])
    if os.sep == "/":
        # A backslash is a separator to Windows-minded servers (and to Node's path.win32);
        # treating it as one here can only make the check stricter.
        text = text.replace("\\", "/")
    text = os.path.expanduser(text)
    if not os.path.isabs(text):
        text = os.path.join(str(base) if base is not None else os.getcwd(), text)
    return text


def resolve(path: str, base: Path | None = None) -> str:
    """The real absolute path the kernel opens for this argument: symlinks of every existing
    component resolved before the `..` that follows them (the nearest existing parent for a
    path that does not exist yet)."""
    return os.path.realpath(_text(path, base))


def allowed_roots(prefixes: tuple[str, ...], base: Path | None = None) -> tuple[str, ...]:
    return tuple(resolve(prefix, base) for prefix in prefixes)


def looks_like_path(value: str) -> bool:
    """A single-line string that starts the way a file path or file: URI does."""
    return len(value) < 4096 and "\n" not in value and bool(_PATHLIKE.match(value.strip()))


def inside(path: str, roots: tuple[str, ...], base: Path | None = None) -> bool:
    """True when path resolves to one of roots or below it, however the server reads `..`."""
    if "\x00" in path or (os.sep == "/" and _DRIVE.match(path.strip())):
        return False  # a drive-letter path has no meaning on this system: refuse it
    text = _text(path, base)
    readings = [os.path.realpath(text)]
    if ".." in text:  # only then can collapsing `..` first read another file
        readings.append(os.path.realpath(os.path.normpath(text)))
    return all(_under(real, roots) for real in readings)


def _under(real: str, roots: tuple[str, ...]) -> bool:
    for root in roots:
        try:
            if os.path.commonpath([real, root]) == root:
                return True
        except ValueError:  # different drives on Windows
            continue
    return False
