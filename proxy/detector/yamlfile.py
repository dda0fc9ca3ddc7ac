"""YAML loading that remembers line numbers, so pack errors can name the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proxy.detector.errors import PackError


class LineDict(dict[str, Any]):
    """A mapping from YAML that knows the line it starts on and the line of each key."""

    line: int
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


def load_yaml(path: Path) -> Any:
    """Parse a YAML file; mappings come back as LineDict. Syntax errors become PackError."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc,valid-type]
        pass

    def construct_mapping(loader: Any, node: Any) -> LineDict:
        out = LineDict()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise PackError(path, key_node.start_mark.line + 1, f"key {key!r} must be a string")
            if key in out:
                raise PackError(
                    path, key_node.start_mark.line + 1, f"duplicate key {key!r}; keep only one"
                )
            out[key] = loader.construct_object(value_node, deep=True)
            out.key_lines[key] = key_node.start_mark.line + 1
        return out

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PackError(path, 0, f"cannot read file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PackError(path, 0, f"not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
    try:
        return yaml.load(text, Loader=Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise PackError(path, line, f"YAML syntax error: {exc.problem or exc}") from exc
    except yaml.YAMLError as exc:
        raise PackError(path, 0, f"YAML error: {exc}") from exc
