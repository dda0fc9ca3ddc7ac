"""The MCP clients Gatewatch knows: where each keeps its config and how servers are stored."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from proxy.clients.edits import Format


@dataclass(frozen=True)
class Shape:
    """Where a file keeps its server entries and what their fields are called."""

    # Key paths to the containers of entries; "*" matches every key (Claude Code projects).
    containers: tuple[tuple[str, ...], ...] = (("mcpServers",),)
    command: str = "command"
    args: str = "args"
    env: str = "env"
    # Continue keeps a list of entries, each with a `name`, instead of a map of name -> entry.
    listed: bool = False
    # The key of an entry's list of environment variable names the client passes through, for
    # a client that starts servers with a minimal environment (Codex: `env_vars`).
    passes_env: str | None = None


@dataclass(frozen=True)
class Client:
    id: str
    label: str
    fmt: Format
    shape: Shape
    # What the user does so the client picks up a change, or None when it reloads by itself.
    restart: str | None


MCP_SERVERS = Shape()

# What `gatewatch run` needs from the user's environment to find the same state as the app and
# the CLI (platformdirs reads XDG_*; keyring reads XDG_* and the session bus address).
GATEWATCH_ENV = ("GATEWATCH_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
                 "DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")

CLIENTS: dict[str, Client] = {
    c.id: c
    for c in (
        Client("claude-desktop", "Claude Desktop", "json", MCP_SERVERS,
               "quit Claude Desktop completely and open it again"),
        Client("claude-code", "Claude Code", "json",
               Shape(containers=(("mcpServers",), ("projects", "*", "mcpServers"))),
               "start a new `claude` session"),
        Client("cursor", "Cursor", "json", MCP_SERVERS,
               "restart Cursor (or turn the server off and on in its MCP settings)"),
        Client("vscode", "VS Code", "json", Shape(containers=(("servers",),)),
               "restart the server from the `MCP: List Servers` command"),
        Client("windsurf", "Windsurf", "json", MCP_SERVERS,
               "press Refresh in Windsurf's MCP servers panel"),
        Client("zed", "Zed", "json", Shape(containers=(("context_servers",),)), None),
        Client("gemini", "Gemini CLI", "json", MCP_SERVERS, "start a new `gemini` session"),
        Client("codex", "Codex", "toml",
               Shape(containers=(("mcp_servers",),), passes_env="env_vars"),
               "start a new `codex` session"),
        Client("goose", "Goose", "yaml",
               Shape(containers=(("extensions",),), command="cmd", env="envs"),
               "start a new goose session"),
        Client("continue", "Continue", "yaml", Shape(listed=True), None),
        Client("lmstudio", "LM Studio", "json", MCP_SERVERS, "restart LM Studio"),
        Client("cline", "Cline", "json", MCP_SERVERS, None),
        Client("custom", "Added by path", "json", MCP_SERVERS,
               "restart the client that reads this file"),
    )
}


def user_config_paths(
    home: Path, platform: str = sys.platform, environ: Mapping[str, str] = os.environ
) -> list[tuple[str, Path]]:
    """(client id, path) of every per-user config file on this OS, existing or not."""
    if platform == "darwin":
        app_support = home / "Library" / "Application Support"
        claude_dir, code_user, xdg = app_support / "Claude", app_support / "Code" / "User", None
    elif platform.startswith("win"):
        appdata = Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
        claude_dir, code_user, xdg = appdata / "Claude", appdata / "Code" / "User", None
    else:
        xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        claude_dir, code_user = xdg / "Claude", xdg / "Code" / "User"
    zed = (home / ".config" / "zed" if platform == "darwin" else
           Path(environ.get("APPDATA") or home) / "Zed" if platform.startswith("win") else
           (xdg or home / ".config") / "zed")
    goose = (Path(environ.get("APPDATA") or home) / "Block" / "goose" / "config"
             if platform.startswith("win") else home / ".config" / "goose")
    codex_home = Path(environ.get("CODEX_HOME") or home / ".codex")
    # Claude Code keeps `.claude.json` in CLAUDE_CONFIG_DIR when set; Gemini CLI takes
    # GEMINI_CLI_HOME as its home directory.
    claude_code = Path(environ.get("CLAUDE_CONFIG_DIR") or home)
    gemini_home = Path(environ.get("GEMINI_CLI_HOME") or home)
    cline = code_user / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
    return [
        ("claude-desktop", claude_dir / "claude_desktop_config.json"),
        ("claude-code", claude_code / ".claude.json"),
        ("cursor", home / ".cursor" / "mcp.json"),
        ("vscode", code_user / "mcp.json"),
        ("windsurf", home / ".codeium" / "windsurf" / "mcp_config.json"),
        ("zed", zed / "settings.json"),
        ("gemini", gemini_home / ".gemini" / "settings.json"),
        ("codex", codex_home / "config.toml"),
        ("goose", goose / "config.yaml"),
        ("continue", home / ".continue" / "config.yaml"),
        ("lmstudio", home / ".lmstudio" / "mcp.json"),
        ("cline", cline / "cline_mcp_settings.json"),
    ]


def project_config_paths(project: Path) -> list[tuple[str, Path]]:
    """(client id, path) of the config files a project directory may hold."""
    found = [
        ("claude-code", project / ".mcp.json"),
        ("cursor", project / ".cursor" / "mcp.json"),
        ("vscode", project / ".vscode" / "mcp.json"),
        ("zed", project / ".zed" / "settings.json"),
        ("gemini", project / ".gemini" / "settings.json"),
    ]
    continue_dir = project / ".continue" / "mcpServers"
    if continue_dir.is_dir():
        found += [("continue", p) for p in sorted(continue_dir.glob("*.yaml"))]
    return found
