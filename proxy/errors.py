"""The errors Gatewatch raises on purpose, under one base.

Every exception class defined in `proxy` and `app` derives from `GatewatchError` (a test walks
the tree to keep it so), so a caller can tell "Gatewatch refused, and says why" from a bug.
Classes keep the builtin base they had (`ValueError`, `RuntimeError`, ...) beside it, so code
that catches those still does. Stdlib only: this module is on the proxy's import chain.
"""

from __future__ import annotations

from pathlib import Path


class GatewatchError(Exception):
    """An error Gatewatch raises on purpose; its message is meant for the user."""


class ConfigFileError(GatewatchError, ValueError):
    """A file the user or a pack author wrote (policy, server pack, rule pack, detector policy,
    detector settings) cannot be used as written.

    Carries the file (None when the text did not come from a file), the 1-based line (0 when
    unknown) and the reason, which says what to change; the message is `file:line: reason`.
    """

    def __init__(self, path: Path | str | None, line: int, reason: str) -> None:
        self.path = Path(path) if path is not None else None
        self.line = line
        self.reason = reason
        super().__init__(f"{self.where}: {reason}" if self.where else reason)

    @property
    def where(self) -> str:
        """`file:line`, `file`, `line N` or '' — whatever is known."""
        if self.path is None:
            return f"line {self.line}" if self.line else ""
        return f"{self.path}:{self.line}" if self.line else str(self.path)


class InvalidValue(GatewatchError, ValueError):
    """A value Gatewatch was handed cannot be used as it is: a tool argument of `gatewatch
    serve`, a duration, an unknown pack or column name, an unreadable reply."""
