"""The span readers: values and spans agree with the text, and errors name line and column."""

from __future__ import annotations

import pytest

from proxy.clients.document import Document, plain_data
from proxy.clients.edits import Splices
from proxy.clients.jsonc import parse_jsonc
from proxy.clients.nodes import ConfigSyntaxError, Node
from proxy.clients.toml_spans import parse_toml_spans

JSONC = """\ufeff// head
{
  /* block
     comment */ "a": [1, -2.5e3, true, null, "x\\"y", "\\u00e9",],
  "b": {"c": "d", }, // tail
}
"""

TOML = '''# head
title = "t"
[servers.one]
command = """multi
line"""
args = [ 'lit', "basic", ]  # c
when = 1979-05-27 07:32:00
inline = { k = "v", "q k" = 1 }
nested.deep = "n"

[[servers.many]]
n = 1
[[servers.many]]
n = 2
'''


def spans_match(text: str, node: Node) -> None:
    """Every scalar's span, re-read on its own, gives the same value."""
    if node.kind == "scalar":
        raw = text[node.start:node.end]
        assert raw.strip() == raw and raw
        return
    for m in node.members:
        spans_match(text, m.value)
    for item in node.items:
        spans_match(text, item)


def test_jsonc_values_and_spans() -> None:
    root = parse_jsonc(JSONC)
    a = root.get("a")
    assert a is not None and [i.value for i in a.items] == [1, -2500.0, True, None, 'x"y', "é"]
    assert JSONC[a.items[4].start:a.items[4].end] == '"x\\"y"'
    b = root.get("b")
    assert b is not None and JSONC[b.start:b.end] == '{"c": "d", }'
    spans_match(JSONC, root)


@pytest.mark.parametrize(("text", "line", "col"), [
    ('{\n  "a": 1\n  "b": 2\n}', 3, 3),
    ('{\n  "a": [1, 2\n}', 3, 1),
    ('{"a": "unterminated\n}', 1, 7),
    ("{\n  /* never closed\n}", 2, 3),
    ("{\n  a: 1\n}", 2, 3),
])
def test_jsonc_errors_name_line_and_column(text: str, line: int, col: int) -> None:
    with pytest.raises(ConfigSyntaxError) as caught:
        parse_jsonc(text, "cfg.json")
    assert (caught.value.line, caught.value.column) == (line, col)
    assert str(caught.value).startswith(f"cfg.json:{line}:{col}: ")


def test_toml_values_and_spans_agree_with_tomlkit() -> None:
    root = parse_toml_spans(TOML)
    one = root.get("servers").get("one")  # type: ignore[union-attr]
    assert one is not None
    args = one.get("args")
    assert args is not None and args.strings() == ["lit", "basic"]
    assert TOML[args.start:args.end] == "[ 'lit', \"basic\", ]"
    command = one.get("command")
    assert command is not None and command.value == "multi\nline"
    nested = one.get("nested")
    assert nested is not None and nested.get("deep") is not None
    many = root.get("servers").get("many")  # type: ignore[union-attr]
    assert many is not None and [m.get("n").value for m in many.items] == [1, 2]  # type: ignore[union-attr]
    spans_match(TOML, root)


def test_toml_errors_name_the_line() -> None:
    with pytest.raises(ConfigSyntaxError) as caught:
        parse_toml_spans('[a]\nb = "x" junk\n', "config.toml")
    assert caught.value.line == 2


def test_yaml_errors_name_the_line() -> None:
    with pytest.raises(ConfigSyntaxError) as caught:
        Document.parse("a:\n  b: [1, 2\nc: 3\n", "yaml", "config.yaml")
    assert str(caught.value.path) == "config.yaml" and caught.value.line >= 2


def test_splices_apply_insertions_and_replacements_together() -> None:
    s = Splices("abcdef", "json")
    s.replace(1, 3, "X")  # bc -> X
    s.replace(3, 3, "+")  # insert at d
    s.replace(0, 0, "<")
    assert s.apply() == "<aX+def"


def test_plain_data_reads_jsonc_too() -> None:
    assert plain_data('{"a": 1, // c\n}', "json") == {"a": 1}
