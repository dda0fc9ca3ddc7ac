"""Logging, configured once per process: `gatewatch` commands (the proxy included) and the app.

Modules log to `logging.getLogger(__name__)`; this module decides where it goes. Everything
goes to stderr, never stdout: for `gatewatch run` and `gatewatch serve`, stdout is the MCP
channel, and MCP clients show a server's stderr in their logs, so a proxy's line reads
`gatewatch: what happened`, as a user should see it. The app adds the time and the module.

`GATEWATCH_LOG=debug|info|warning|error` sets the level (default: warning for commands, info
for the app). Stdlib only: asyncio imports `logging` already, so the proxy starts no slower.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Literal

Process = Literal["command", "app"]
ENV = "GATEWATCH_LOG"
_FORMATS: dict[Process, str] = {
    "command": "gatewatch: %(message)s",
    "app": "%(asctime)s %(name)s: %(message)s",
}
_DEFAULT_LEVEL: dict[Process, int] = {"command": logging.WARNING, "app": logging.INFO}
_LEVELS = ("debug", "info", "warning", "error")


class _Stderr(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a record is emitted (as print does), so a
    replaced stderr (a test's capture, a redirect) sees the lines."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def configure(process: Process = "command") -> None:
    """Send log records to stderr in the process's format. Calling it again changes nothing."""
    root = logging.getLogger()
    if any(isinstance(handler, _Stderr) for handler in root.handlers):
        return
    handler = _Stderr()
    handler.setFormatter(logging.Formatter(_FORMATS[process]))
    root.addHandler(handler)
    wanted = os.environ.get(ENV, "").strip().lower()
    known = wanted in _LEVELS
    root.setLevel(getattr(logging, wanted.upper()) if known else _DEFAULT_LEVEL[process])
    if wanted and not known:
        logging.getLogger(__name__).warning(
            "%s=%r is not one of %s; using %s", ENV, wanted, ", ".join(_LEVELS),
            logging.getLevelName(root.level).lower(),
        )
