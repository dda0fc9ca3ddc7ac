"""A span-aware reader for TOML documents (tables, dotted keys, arrays, inline tables).

tomlkit keeps formatting when it writes, but re-quotes and re-spaces what it touches; this reader
only finds spans so edits can be splices. Scalar values are decoded by tomlkit itself.
"""

from __future__ import annotations

import re

from proxy.clients.nodes import ConfigSyntaxError, Member, Node, line_col

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL_STR = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^\\]|\\.)*?"""', re.S)
_ML_LITERAL = re.compile(r"'''.*?'''", re.S)
_ATOM = re.compile(r"[^\s,\]}#]+(?: \d[0-9:.+Z-]*)?")  # a local date-time may hold one space


def parse_toml_spans(text: str, path: str = "<text>") -> Node:
    return _Reader(text, path).document()


def _decode(raw: str) -> object:
    import tomlkit

    return tomlkit.parse(f"v = {raw}\n").unwrap()["v"]


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0

    def fail(self, reason: str) -> ConfigSyntaxError:
        line, col = line_col(self.text, self.pos)
        return ConfigSyntaxError(self.path, line, col, reason)

    def skip(self, newlines: bool) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t" or (newlines and ch in "\r\n"):
                self.pos += 1
            elif ch == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def document(self) -> Node:
        root = Node("map", 0, len(self.text), flow=False)
        table = root
        while True:
            self.skip(newlines=True)
            if self.pos >= len(self.text):
                return root
            if self.text.startswith("[[", self.pos):
                start = self.pos
                self.pos += 2
                keys = self.keys("]]")
                seq = self.child(root, keys[:-1], keys[-1], start, "seq")
                table = Node("map", start, self.pos, flow=False)
                seq.items.append(table)
            elif self.text.startswith("[", self.pos):
                start = self.pos
                self.pos += 1
                keys = self.keys("]")
                table = self.child(root, keys[:-1], keys[-1], start, "map")
                table.start, table.end = start, self.pos
            else:
                key_start = self.pos
                keys = self.keys("=")
                self.skip(newlines=False)
                parent = self.child(table, keys[:-2], keys[-2], self.pos, "map") if len(
                    keys) > 1 else table
                value = self.value()
                parent.members.append(Member(keys[-1], key_start, value))
                table.end = max(table.end, value.end)
            self.skip(newlines=False)
            if self.pos < len(self.text) and self.text[self.pos] not in "\r\n":
                raise self.fail("expected the end of the line")

    def child(self, parent: Node, path: list[str], key: str, at: int, kind: str) -> Node:
        for name in path:
            parent = self.child(parent, [], name, at, "map")
            if parent.kind == "seq":
                parent = parent.items[-1]
        found = parent.get(key)
        if found is None:
            found = Node("map" if kind == "map" else "seq", at, at, flow=False)
            parent.members.append(Member(key, at, found))
        return found

    def keys(self, terminator: str) -> list[str]:
        keys: list[str] = []
        while True:
            self.skip(newlines=False)
            for pattern in (_BASIC, _LITERAL_STR, _BARE_KEY):
                m = pattern.match(self.text, self.pos)
                if m:
                    raw = m.group()
                    keys.append(str(_decode(raw)) if raw[0] in "\"'" else raw)
                    self.pos = m.end()
                    break
            else:
                raise self.fail("expected a key")
            self.skip(newlines=False)
            if self.text.startswith(".", self.pos):
                self.pos += 1
                continue
            if not self.text.startswith(terminator, self.pos):
                raise self.fail(f"expected {terminator!r}")
            self.pos += len(terminator)
            return keys

    def value(self) -> Node:
        start = self.pos
        if self.text.startswith("[", self.pos):
            node = Node("seq", start, start)
            self.pos += 1
            while True:
                self.skip(newlines=True)
                if self.text.startswith("]", self.pos):
                    break
                node.items.append(self.value())
                self.skip(newlines=True)
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                elif not self.text.startswith("]", self.pos):
                    raise self.fail("expected ',' or ']'")
            self.pos += 1
            node.end = self.pos
            return node
        if self.text.startswith("{", self.pos):
            node = Node("map", start, start)
            self.pos += 1
            while True:
                self.skip(newlines=False)
                if self.text.startswith("}", self.pos):
                    break
                key_start = self.pos
                keys = self.keys("=")
                self.skip(newlines=False)
                parent = node
                for name in keys[:-1]:
                    parent = self.child(parent, [], name, key_start, "map")
                parent.members.append(Member(keys[-1], key_start, self.value()))
                self.skip(newlines=False)
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                elif not self.text.startswith("}", self.pos):
                    raise self.fail("expected ',' or '}'")
            self.pos += 1
            node.end = self.pos
            return node
        for pattern in (_ML_BASIC, _ML_LITERAL, _BASIC, _LITERAL_STR, _ATOM):
            m = pattern.match(self.text, self.pos)
            if m:
                self.pos = m.end()
                try:
                    return Node("scalar", start, self.pos, _decode(m.group()))
                except Exception as exc:  # tomlkit raises its own ParseError types
                    self.pos = start
                    raise self.fail(f"bad value ({exc})") from None
        raise self.fail("expected a value")
