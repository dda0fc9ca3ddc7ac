"""A span-aware reader for JSON with comments (`//`, `/* */`) and trailing commas.

The JSONC libraries on PyPI either drop positions or are young bindings; this one is small and
only reads: it returns a tree of Nodes with their character spans for surgical edits.
"""

from __future__ import annotations

import json
import re

from proxy.clients.nodes import ConfigSyntaxError, Member, Node, line_col

_LITERAL = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null")
_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_SPACE = re.compile(r"[ \t\r\n]*")


def parse_jsonc(text: str, path: str = "<text>") -> Node:
    return _Reader(text, path).document()


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 1 if text.startswith("\ufeff") else 0

    def fail(self, reason: str, at: int | None = None) -> ConfigSyntaxError:
        line, col = line_col(self.text, self.pos if at is None else at)
        return ConfigSyntaxError(self.path, line, col, reason)

    def document(self) -> Node:
        self.skip()
        node = self.value()
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the end of the JSON value")
        return node

    def skip(self) -> None:
        """Past whitespace and comments."""
        text = self.text
        while True:
            space = _SPACE.match(text, self.pos)
            self.pos = space.end() if space else self.pos
            if text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        if ch == '"':
            start = self.pos
            value = self.string()
            return Node("scalar", start, self.pos, value)
        m = _LITERAL.match(self.text, self.pos)
        if not m:
            raise self.fail(f"unexpected character {ch!r}")
        self.pos = m.end()
        return Node("scalar", m.start(), m.end(), json.loads(m.group()))

    def string(self) -> str:
        m = _STRING.match(self.text, self.pos)
        if not m:
            raise self.fail("unterminated string")
        self.pos = m.end()
        raw = m.group()
        if "\\" not in raw:
            return raw[1:-1]
        try:
            value: str = json.loads(raw)
        except ValueError as exc:
            raise self.fail(f"bad string escape ({exc.args[0]})", m.start()) from None
        return value

    def obj(self) -> Node:
        node = Node("map", self.pos, self.pos)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':' after the key")
            self.pos += 1
            self.skip()
            node.members.append(Member(key, key_start, self.value()))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def arr(self) -> Node:
        node = Node("seq", self.pos, self.pos)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        node.end = self.pos
        return node
