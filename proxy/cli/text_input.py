"""Text a user hands the CLI (an argument, standard input, a file), read the way a reader sees it.

Bytes that are not UTF-8 reach Python as lone surrogates (the file-system encoding's
`surrogateescape`), which no UTF-8 consumer can encode: the detector's searches failed on
them and the scan ended with the error policy's verdict. Such a byte is read as U+FFFD, as an
editor or a browser shows it; text that is valid UTF-8 is returned unchanged.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def from_argument(value: str) -> str:
    """A command-line argument, its undecodable bytes as U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(value).decode("utf-8", "replace")
    return value


def from_stdin() -> str:
    """All of standard input as UTF-8, undecodable bytes as U+FFFD."""
    return sys.stdin.buffer.read().decode("utf-8", "replace")


def from_file(path: Path) -> str:
    """A file's contents as UTF-8, undecodable bytes as U+FFFD; OSError when it cannot be read."""
    return path.read_bytes().decode("utf-8", "replace")
