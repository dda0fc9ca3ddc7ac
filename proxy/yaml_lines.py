"""YAML loading that remembers where each key was, so a bad file names its line.

The one loader for the YAML people write for Gatewatch: user policies and server packs
(proxy/engine/policy.py), rule packs, the detector policy and detector settings
(proxy/detector/). Mappings come back as LineDict; keys must be strings and appear once.
Every problem is a ConfigFileError(path, line, reason) — or the subclass the caller names, so
its own callers keep catching what they catch.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from proxy.errors import ConfigFileError, GatewatchError


class LineDict(dict[str, Any]):
    """A mapping from YAML that knows its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class _KeyProblem(GatewatchError):
    """A bad key, raised from inside PyYAML's constructor; never leaves this module."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


@functools.cache
def _loader() -> Any:
    """The loader class, built on first use: PyYAML is imported only when a file is parsed."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):
        pass

    def construct_mapping(loader: Any, node: Any) -> LineDict:
        loader.flatten_mapping(node)
        out = LineDict()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _KeyProblem(line, f"key {key!r} must be a string; quote it")
            if key in out:
                raise _KeyProblem(line, f"duplicate key {key!r}; keep only one")
            out[key] = loader.construct_object(value_node, deep=True)
            out.key_lines[key] = line
        return out

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


def load_yaml(
    text: str, path: Path | str | None = None, *, error: type[ConfigFileError] = ConfigFileError
) -> Any:
    """Parse YAML text (from `path`, for messages); mappings come back as LineDict."""
    import yaml

    try:
        return yaml.load(text, Loader=_loader())
    except _KeyProblem as exc:
        raise error(path, exc.line, exc.reason) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise error(path, line, f"YAML syntax error: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise error(path, 0, f"YAML error: {exc}") from None


def read_yaml(path: Path, *, error: type[ConfigFileError] = ConfigFileError) -> Any:
    """Read and parse a YAML file; an unreadable or non-UTF-8 file is an `error` too."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(path, 0, f"cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(path, 0, f"not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    return load_yaml(text, path, error=error)
