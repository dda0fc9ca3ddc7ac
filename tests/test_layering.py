"""The layering DESIGN.md promises: `proxy` never imports `app` (nor Qt), and `gatewatch`
starts the app through app.launcher while every other command reaches the proxy's CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support import GATEWATCH, ROOT, child_env


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):  # lazy imports inside functions count too
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_proxy_module_imports_app_or_qt() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name for name in _imports(path)
            if name.split(".")[0] in {"app", "PySide6"}
        )
        for path in (ROOT / "proxy").rglob("*.py")
    }
    # The doctor checks Qt (finds its plugin, probes it in a child process); nothing else may.
    offenders = {path: names for path, names in offenders.items()
                 if names and not path.startswith("proxy/doctor/")}
    assert offenders == {}


def test_the_gatewatch_command_reaches_the_cli_without_loading_qt() -> None:
    code = (
        "import sys; from app.launcher import main; rc = main(['version']); "
        "assert 'PySide6' not in sys.modules and 'app.main' not in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith(('PySide6', 'app')))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "gatewatch" in done.stdout


def test_python_m_proxy_without_a_command_points_at_the_app() -> None:
    done = subprocess.run([sys.executable, "-m", "proxy"], env=child_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "tray app is started by the `gatewatch` command" in done.stderr
    assert GATEWATCH[-1] == "app"  # the tests launch what the console script runs
