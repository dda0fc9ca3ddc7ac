"""A format-neutral tree of a config file's values, each with its span in the text.

Edits are made as splices of the original text at these spans, so every byte outside the edited
spans (comments, key order, indentation, quoting) stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from proxy.errors import ConfigFileError


class ConfigSyntaxError(ConfigFileError):
    """A client's config file that cannot be parsed: names the file, line, column and what is
    wrong."""

    def __init__(self, path: str, line: int, column: int, reason: str) -> None:
        super().__init__(path, line, reason)
        self.column = column
        self.args = (f"{path}:{line}:{column}: {reason}; fix the file by hand, then try again",)


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


@dataclass
class Node:
    kind: Literal["map", "seq", "scalar"]
    start: int
    end: int
    value: object = None  # the scalar's value
    items: list[Node] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)
    # False for YAML block collections and TOML tables (one entry per line, no brackets).
    flow: bool = True

    def member(self, key: str) -> Member | None:
        for m in self.members:
            if m.key == key:
                return m
        return None

    def get(self, key: str) -> Node | None:
        m = self.member(key)
        return m.value if m else None

    def text(self) -> str | None:
        """The scalar's value when it is a string, else None."""
        return self.value if self.kind == "scalar" and isinstance(self.value, str) else None

    def strings(self) -> list[str] | None:
        """The sequence's items when all are strings, else None."""
        if self.kind != "seq":
            return None
        out = [item.text() for item in self.items]
        return None if any(s is None for s in out) else [s for s in out if s is not None]
