"""A home directory laid out with a realistic config of every client (tests/fixtures/clients),
shared by the client-config tests and the Clients tab tests (the `home` fixture is registered
through `pytest_plugins` in conftest.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "clients"
EXE = str(Path(sys.executable).parent / "gatewatch")

# fixture -> where it lives under HOME on Linux
LAYOUT = {
    "claude_desktop_config.json": ".config/Claude/claude_desktop_config.json",
    "claude.json": ".claude.json",
    "vscode_mcp.json": ".config/Code/User/mcp.json",
    "zed_settings.json": ".config/zed/settings.json",
    "codex_config.toml": ".codex/config.toml",
    "goose_config.yaml": ".config/goose/config.yaml",
    "continue_config.yaml": ".continue/config.yaml",
    "cline_mcp_settings.json":
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    "gemini_settings.json": ".gemini/settings.json",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for fixture, where in LAYOUT.items():
        (home / where).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, home / where)
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA", "CLAUDE_CONFIG_DIR",
                "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GATEWATCH_EXECUTABLE", EXE)
    return home
