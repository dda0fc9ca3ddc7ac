"""Splice edits at node spans, in the syntax of the file's format.

Every edit here has an exact inverse (see wrapping.py): inserted items copy the separator that
the file already uses, so removing them gives back the original bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from proxy.clients.nodes import Member, Node
from proxy.errors import GatewatchError

Format = Literal["json", "toml", "yaml"]

_YAML_PLAIN = re.compile(r"(?:--?)?[A-Za-z_/][A-Za-z0-9_./@+~-]*")  # never .inf, ~, numbers
_YAML_SPECIAL = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


class EditError(GatewatchError, ValueError):
    """The file's layout is one these edits do not handle; nothing is written."""


def render_string(fmt: Format, value: str) -> str:
    if fmt == "yaml" and _YAML_PLAIN.fullmatch(value) and value.lower() not in _YAML_SPECIAL:
        return value
    # A JSON string literal is also a valid TOML basic string and YAML double-quoted scalar.
    return json.dumps(value, ensure_ascii=fmt != "json")


def _member_text(fmt: Format, key: str, value_text: str) -> str:
    if fmt == "json":
        return f"{json.dumps(key)}: {value_text}"
    if fmt == "toml":
        return f"{key} = {value_text}"
    return f"{key}: {value_text}"


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    """Where the line's content ends: before its "\n", or before "\r\n"."""
    end = text.find("\n", pos)
    if end < 0:
        return len(text)
    return end - 1 if end > pos and text[end - 1] == "\r" else end


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


@dataclass
class Splices:
    """Replacements of [start, end) spans in one text, applied together."""

    text: str
    fmt: Format
    _edits: list[tuple[int, int, str]] = field(default_factory=list)

    def replace(self, start: int, end: int, new: str) -> None:
        self._edits.append((start, end, new))

    def apply(self) -> str:
        pieces = []
        done = 0  # everything before this offset is in pieces
        # An insertion at a span's end (start == end) sorts before a replacement starting there.
        for start, end, new in sorted(self._edits, key=lambda e: (e[0], e[1] != e[0])):
            if start < done:
                raise EditError("overlapping edits")
            pieces += [self.text[done:start], new]
            done = end
        pieces.append(self.text[done:])
        return "".join(pieces)

    # -- higher-level edits -------------------------------------------------------------

    def set_scalar(self, node: Node, raw: str) -> None:
        if node.kind != "scalar":
            raise EditError("expected a single value")
        self.replace(node.start, node.end, raw)

    def raw(self, node: Node) -> str:
        return self.text[node.start : node.end]

    def prepend_items(self, seq: Node, raws: list[str]) -> None:
        """Insert items (given as literal text) before the first item, in the list's style."""
        text = self.text
        if not seq.flow:
            first = seq.items[0].start
            begin = line_start(text, first)
            prefix = text[begin:first]
            if prefix.strip() != "-":
                raise EditError("a block list whose items do not start their own lines")
            nl = newline_of(text)
            self.replace(begin, begin, "".join(f"{prefix}{r}{nl}" for r in raws))
            return
        if not seq.items:
            self.replace(seq.start + 1, seq.start + 1, ", ".join(raws))
            return
        first = seq.items[0].start
        gap = first
        while gap > seq.start + 1 and text[gap - 1] in " \t\r\n":
            gap -= 1
        space = text[gap:first]
        if not space:  # `["a", "b"]`: copy the space the list puts after its commas
            after = (text[seq.items[0].end : seq.items[1].start].partition(",")[2]
                     if len(seq.items) > 1 else " ")
            space = after if not after.strip() else " "
        sep = "," + space
        self.replace(first, first, "".join(r + sep for r in raws))

    def append_items(self, seq: Node, raws: list[str]) -> None:
        """Add items (literal text) after the last one of a flow list, in the list's style."""
        if not seq.flow:
            raise EditError("a block list where a flow list was expected")
        if not seq.items:
            self.prepend_items(seq, raws)
            return
        text = self.text
        last = seq.items[-1]
        space = " "
        if len(seq.items) > 1:  # copy the gap the list puts after its commas
            between = text[seq.items[-2].end : last.start].partition(",")[2]
            space = between if between and not between.strip() else " "
        self.replace(last.end, last.end, "".join("," + space + r for r in raws))

    def drop_trailing_items(self, seq: Node, count: int) -> None:
        """Remove the last `count` items of a flow list that has more than `count`."""
        keep = seq.items[-count - 1]
        self.replace(keep.end, seq.items[-1].end, "")

    def empty_list(self, member: Member) -> None:
        """Make a list member's value `[]`, whatever style it has now."""
        seq = member.value
        if seq.flow:
            self.replace(seq.start, seq.end, "[]")
            return
        # A YAML block list (a client rewrote the file): `key:` then `- item` lines.
        colon = self.text.index(":", member.key_start)
        self.replace(colon + 1, line_end(self.text, seq.items[-1].end), " []")

    def drop_leading_items(self, seq: Node, count: int) -> None:
        """Remove the first `count` items of a list that has more than `count`."""
        text = self.text
        if not seq.flow:
            self.replace(line_start(text, seq.items[0].start),
                         line_start(text, seq.items[count].start), "")
        else:
            self.replace(seq.items[0].start, seq.items[count].start, "")

    def insert_member_after(self, parent: Node, after: Member, key: str, value_text: str) -> None:
        text = self.text
        member = _member_text(self.fmt, key, value_text)
        if not parent.flow:
            at = line_end(text, after.value.end)
            indent = text[line_start(text, after.key_start) : after.key_start]
            if indent.strip():
                raise EditError("a key that does not start its own line")
            self.replace(at, at, f"{newline_of(text)}{indent}{member}")
            return
        gap = after.key_start
        while gap > parent.start + 1 and text[gap - 1] in " \t\r\n":
            gap -= 1
        self.replace(after.value.end, after.value.end,
                     "," + (text[gap : after.key_start] or " ") + member)

    def insert_member_before(self, parent: Node, before: Member, key: str,
                             value_text: str) -> None:
        text = self.text
        member = _member_text(self.fmt, key, value_text)
        if not parent.flow:
            begin = line_start(text, before.key_start)
            indent = text[begin : before.key_start]
            if indent.strip():
                raise EditError("a key that does not start its own line")
            self.replace(begin, begin, f"{indent}{member}{newline_of(text)}")
            return
        gap = before.key_start  # copy the whitespace in front of `before` after the comma
        while gap > parent.start + 1 and text[gap - 1] in " \t\r\n":
            gap -= 1
        self.replace(before.key_start, before.key_start,
                     member + "," + (text[gap : before.key_start] or " "))

    def remove_member(self, parent: Node, member: Member) -> None:
        text = self.text
        if not parent.flow:
            begin, end = line_start(text, member.key_start), line_end(text, member.value.end)
            # Take the line's own newline, or the one before it on a file's last line.
            if end < len(text):
                end += 2 if text.startswith("\r\n", end) else 1
            elif begin > 0:
                begin -= 2 if text[begin - 2 : begin] == "\r\n" else 1
            self.replace(begin, end, "")
            return
        index = parent.members.index(member)
        if index > 0:
            self.replace(parent.members[index - 1].value.end, member.value.end, "")
        elif index + 1 < len(parent.members):
            self.replace(member.key_start, parent.members[index + 1].key_start, "")
        else:
            self.replace(member.key_start, member.value.end, "")
