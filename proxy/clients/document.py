"""A config file's text with its span tree, and an independent parse to check edits against."""

from __future__ import annotations

from dataclasses import dataclass

from proxy.clients.edits import Format
from proxy.clients.nodes import ConfigSyntaxError, Node

Key = str | int


@dataclass
class Document:
    path: str
    fmt: Format
    text: str
    root: Node

    @classmethod
    def parse(cls, text: str, fmt: Format, path: str = "<text>") -> Document:
        if fmt == "json":
            from proxy.clients.jsonc import parse_jsonc

            root = parse_jsonc(text, path)
        elif fmt == "toml":
            from proxy.clients.toml_spans import parse_toml_spans

            root = parse_toml_spans(text, path)
        else:
            from proxy.clients.yaml_spans import parse_yaml_spans

            root = parse_yaml_spans(text, path)
        if text.strip() and root.kind != "map":
            raise ConfigSyntaxError(path, 1, 1, "the top level is not an object")
        return cls(path, fmt, text, root)

    def node(self, location: tuple[Key, ...]) -> Node | None:
        node: Node | None = self.root
        for key in location:
            if node is None:
                return None
            if isinstance(key, int):
                node = node.items[key] if node.kind == "seq" and key < len(node.items) else None
            else:
                node = node.get(key) if node.kind == "map" else None
        return node


def plain_data(text: str, fmt: Format) -> object:
    """The file's values from a parser other than the span readers, to verify splices with."""
    if fmt == "toml":
        import tomlkit

        return tomlkit.parse(text).unwrap()
    if fmt == "yaml":
        from ruamel.yaml import YAML

        return YAML(typ="safe", pure=True).load(text)
    import json

    try:  # most files are strict JSON, and json is fast (~/.claude.json runs to megabytes)
        return json.loads(text)
    except ValueError:
        from proxy.clients.jsonc import parse_jsonc

        return _to_python(parse_jsonc(text))


def _to_python(node: Node) -> object:
    if node.kind == "map":
        return {m.key: _to_python(m.value) for m in node.members}
    if node.kind == "seq":
        return [_to_python(i) for i in node.items]
    return node.value
