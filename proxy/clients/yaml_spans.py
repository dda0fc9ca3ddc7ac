"""Spans of a YAML document from ruamel.yaml's composer (nodes carry start and end marks)."""

from __future__ import annotations

from typing import Any

from proxy.clients.nodes import ConfigSyntaxError, Member, Node

_BOOL = "tag:yaml.org,2002:bool"


def parse_yaml_spans(text: str, path: str = "<text>") -> Node:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

    try:
        root = YAML().compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise ConfigSyntaxError(path, line, col, str(exc.problem or exc.context)) from None
    if root is None:
        return Node("map", 0, len(text), flow=False)
    return _convert(root)


def _convert(node: Any) -> Node:
    start, end = node.start_mark.index, node.end_mark.index
    kind = type(node).__name__
    if kind == "MappingNode":
        out = Node("map", start, end, flow=bool(node.flow_style))
        for key, item in node.value:
            out.members.append(Member(str(key.value), key.start_mark.index, _convert(item)))
        return out
    if kind == "SequenceNode":
        return Node("seq", start, end, items=[_convert(v) for v in node.value],
                    flow=bool(node.flow_style))
    value: object = node.value
    if node.tag == _BOOL:
        value = str(node.value).lower() in ("true", "yes", "on")
    return Node("scalar", start, end, value)
