"""One error hierarchy: everything Gatewatch raises on purpose derives from GatewatchError."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
from pathlib import Path

import pytest

from proxy.errors import ConfigFileError, GatewatchError

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("proxy", "app")


def _modules() -> list[tuple[str, Path]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":  # running it is what importing it does
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join(parts), path))
    return found


def _exception_classes(module: object) -> list[type[BaseException]]:
    """Exception classes defined in `module`, at top level or inside a class."""
    out: list[type[BaseException]] = []
    todo = [value for value in vars(module).values() if inspect.isclass(value)]
    while todo:
        cls = todo.pop()
        if cls.__module__ != getattr(module, "__name__", None) or cls in out:
            continue
        if issubclass(cls, BaseException):
            out.append(cls)
        todo.extend(value for value in vars(cls).values() if inspect.isclass(value))
    return out


def test_the_walk_sees_the_whole_tree() -> None:
    names = {name for name, _ in _modules()}
    assert {"proxy.runner", "proxy.relay.strict", "app.hub", "proxy.errors"} <= names
    classes = {cls.__name__ for name, _ in _modules()
               for cls in _exception_classes(importlib.import_module(name))}
    # Spot checks across the tree, so a walk that silently finds nothing fails here.
    assert {"FrameError", "PolicyError", "PackError", "HubError", "SettingsError"} <= classes


def test_every_exception_class_derives_from_gatewatch_error() -> None:
    strays = []
    for name, _ in _modules():
        module = importlib.import_module(name)
        for cls in _exception_classes(module):
            if not issubclass(cls, GatewatchError):
                strays.append(f"{name}.{cls.__qualname__}")
    assert strays == [], f"derive these from proxy.errors.GatewatchError: {strays}"


_BUILTIN_ERRORS = {name for name, value in vars(builtins).items()
                   if inspect.isclass(value) and issubclass(value, BaseException)}


def test_no_exception_class_hides_inside_a_function() -> None:
    """Classes defined in a function body cannot be reached by importing: none may be an
    exception class built straight on a builtin one."""
    hidden = []
    for name, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.ClassDef) and any(
                    isinstance(base, ast.Name) and base.id in _BUILTIN_ERRORS
                    for base in node.bases
                ):
                    hidden.append(f"{name}:{node.lineno} {node.name}")
    assert hidden == []


def test_config_file_error_names_file_line_and_reason() -> None:
    err = ConfigFileError("/etc/gw/policy.yaml", 7, "`max_calls` must be a positive integer")
    assert str(err) == "/etc/gw/policy.yaml:7: `max_calls` must be a positive integer"
    assert (err.path, err.line) == (Path("/etc/gw/policy.yaml"), 7)
    assert str(ConfigFileError("p.yaml", 0, "cannot read file")) == "p.yaml: cannot read file"
    # Text that did not come from a file: no "None" in what the user reads.
    assert str(ConfigFileError(None, 3, "duplicate key 'a'")) == "line 3: duplicate key 'a'"
    assert str(ConfigFileError(None, 0, "empty")) == "empty"


def test_builtin_bases_are_kept_for_callers_that_catch_them() -> None:
    from proxy.relay.strict import FrameError, parse
    from proxy.upstream import UpstreamStartError

    with pytest.raises(ValueError):  # FrameError is still a ValueError
        parse(b'{"a":1,"a":2}')
    assert issubclass(FrameError, ValueError) and issubclass(UpstreamStartError, RuntimeError)
    assert issubclass(ConfigFileError, ValueError)


def test_policy_pack_and_settings_errors_are_config_file_errors(tmp_path: Path) -> None:
    from proxy.detector.rules import load_pack
    from proxy.engine import load_policy
    from proxy.settings import load_settings

    bad_policy = tmp_path / "policy.yaml"
    bad_policy.write_text("version: 1\nservers:\n  fs:\n    tools: 3\n")
    bad_pack = tmp_path / "pack.yaml"
    bad_pack.write_text("pack: mine\nrules: []\n")
    bad_settings = tmp_path / "settings.yaml"
    bad_settings.write_text("\nask_via: carrier-pigeon\n")
    for load, path, line in ((load_policy, bad_policy, 4), (load_pack, bad_pack, 2),
                             (load_settings, bad_settings, 2)):
        with pytest.raises(ConfigFileError) as caught:
            load(path)
        assert (caught.value.path, caught.value.line) == (path, line)
        assert str(caught.value).startswith(f"{path}:{line}: ")


# A bug check that is caught where it is raised, never shown to anyone as a refusal.
INTERNAL_RAISES = {("proxy/gate.py", "TypeError")}


def test_nothing_raises_a_bare_builtin_error_on_purpose() -> None:
    """`raise ValueError("…")` would be an error with a message for the user outside the
    hierarchy: such raises use InvalidValue (or a class of their own) instead."""
    builtin_errors = {name for name, value in vars(builtins).items()
                      if inspect.isclass(value) and issubclass(value, Exception)}
    found = []
    for _, path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                continue
            func = node.exc.func
            if isinstance(func, ast.Name) and func.id in builtin_errors \
                    and (rel, func.id) not in INTERNAL_RAISES:
                found.append(f"{rel}:{node.lineno} raises {func.id}")
    assert found == []
