"""Discovery under a test HOME, and `gatewatch clients / wrap / unwrap` as real processes:
preview, backups, permissions, stale files, restart hints, exact undo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from proxy.clients import changes, discovery, health
from proxy.clients.catalog import project_config_paths, user_config_paths
from proxy.clients.entries import Transport
from tests.clients_home import EXE, FIXTURES, LAYOUT
from tests.support import GATEWATCH, child_env

CLIENT_OF = {
    "claude_desktop_config.json": "claude-desktop", "claude.json": "claude-code",
    "vscode_mcp.json": "vscode", "zed_settings.json": "zed", "codex_config.toml": "codex",
    "goose_config.yaml": "goose", "continue_config.yaml": "continue",
    "cline_mcp_settings.json": "cline", "gemini_settings.json": "gemini",
}


def gatewatch(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GATEWATCH, *args], env=child_env(), input=stdin, text=True,
                          capture_output=True, timeout=60)


def listing() -> dict[str, dict[str, bool]]:
    out = gatewatch("clients", "--json")
    assert out.returncode == 0, out.stderr
    return {c["client"]: {s["name"]: s["wrapped"] for s in c["servers"]
                          if s["transport"] == "stdio"} for c in json.loads(out.stdout)}


def test_discovery_finds_every_client_under_home(home: Path) -> None:
    found = {(c.client.id, c.path) for c in discovery.discover()}
    assert found == {(CLIENT_OF[fixture], home / where) for fixture, where in LAYOUT.items()}


def test_claude_code_projects_and_their_files_are_found(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "webapp"
    (project / ".vscode").mkdir(parents=True)
    (project / ".mcp.json").write_text('{"mcpServers": {"p": {"command": "p-server"}}}')
    shutil.copy(FIXTURES / "vscode_mcp.json", project / ".vscode" / "mcp.json")
    claude = home / ".claude.json"
    claude.write_text(claude.read_text().replace("/home/me/src/webapp", str(project)))
    by_path = {c.path: c for c in discovery.discover()}
    assert by_path[project / ".mcp.json"].client.id == "claude-code"
    assert by_path[project / ".vscode" / "mcp.json"].client.id == "vscode"
    scopes = {e.name: e.scope for e in discovery.load(by_path[claude]).entries}
    assert scopes == {"memory": "", "sentry": "", "postgres": str(project)}


def test_claude_config_dir_moves_claude_codes_file_with_its_local_scope_servers(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "claude-config"
    elsewhere.mkdir()
    (home / ".claude.json").rename(elsewhere / ".claude.json")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    config = next(c for c in discovery.discover() if c.client.id == "claude-code")
    assert config.path == elsewhere / ".claude.json"
    entries = {e.name: e.scope for e in discovery.load(config).entries}
    assert entries["postgres"] == "/home/me/src/webapp"  # local scope, under `projects`
    # The CLI lists the local-scope server as unprotected, saying which project it is for.
    out = gatewatch("clients")
    line = next(x for x in out.stdout.splitlines() if "postgres" in x)
    assert "unprotected" in line and "/home/me/src/webapp" in line
    # Named by hand, a .claude.json is still read as Claude Code's (project servers included).
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    added = discovery.config_for_path(elsewhere / ".claude.json")
    assert added.client.id == "claude-code"
    assert "postgres" in {e.name for e in discovery.load(added).entries}


def test_gemini_projects_and_gemini_cli_home_are_followed(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text(
        '{"mcpServers": {"fs": {"command": "fs-server", "args": []}}}')
    (home / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {str(project): "repo"}}))
    found = {c.path: c for c in discovery.discover()}
    assert found[project / ".gemini" / "settings.json"].client.id == "gemini"
    other = tmp_path / "gemini-home"
    (other / ".gemini").mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini_settings.json", other / ".gemini" / "settings.json")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(other))
    users = {c.path for c in discovery.discover() if c.client.id == "gemini"}
    assert other / ".gemini" / "settings.json" in users
    assert home / ".gemini" / "settings.json" not in users


def test_per_os_paths_are_known() -> None:
    mac = dict(user_config_paths(Path("/Users/me"), "darwin", {}))
    assert mac["claude-desktop"] == Path(
        "/Users/me/Library/Application Support/Claude/claude_desktop_config.json")
    assert mac["vscode"] == Path("/Users/me/Library/Application Support/Code/User/mcp.json")
    assert mac["zed"] == Path("/Users/me/.config/zed/settings.json")
    win = dict(user_config_paths(Path("C:/Users/me"), "win32",
                                 {"APPDATA": "C:/Users/me/AppData/Roaming"}))
    assert win["claude-desktop"] == Path(
        "C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json")
    assert win["codex"] == Path("C:/Users/me/.codex/config.toml")
    linux = dict(user_config_paths(Path("/home/me"), "linux",
                                   {"XDG_CONFIG_HOME": "/xdg", "CODEX_HOME": "/codex"}))
    assert linux["claude-desktop"] == Path("/xdg/Claude/claude_desktop_config.json")
    assert linux["codex"] == Path("/codex/config.toml")
    assert dict(project_config_paths(Path("/p")))["claude-code"] == Path("/p/.mcp.json")


@pytest.mark.e2e
def test_wrap_all_then_unwrap_all_through_the_cli(home: Path, gw_home: Path) -> None:
    desktop = home / LAYOUT["claude_desktop_config.json"]
    desktop.chmod(0o600)
    before = {where: (home / where).read_bytes() for where in LAYOUT.values()}
    assert not any(any(s.values()) for s in listing().values())

    out = gatewatch("wrap", "--all", "--yes")
    assert out.returncode == 0, out.stderr
    assert f"+++ {desktop}" in out.stdout  # the preview
    assert "Claude Desktop: quit Claude Desktop completely" in out.stdout
    assert "Zed:" not in out.stdout  # Zed reloads context servers by itself
    assert "remote server (URL)" in out.stderr  # the skipped remote entries are named
    wrapped = listing()
    assert all(all(s.values()) for s in wrapped.values()), wrapped
    assert wrapped["claude-code"] == {"memory": True, "postgres": True}
    assert desktop.stat().st_mode & 0o777 == 0o600
    backups = [b for b in (gw_home / "data" / "backups").rglob("*.json") if b.is_file()]
    assert any(b.read_bytes() == before[LAYOUT["claude_desktop_config.json"]] for b in backups)

    again = gatewatch("wrap", "--all", "--yes")
    assert again.returncode == 0 and "Nothing to change." in again.stdout

    out = gatewatch("unwrap", "--all", "--yes")
    assert out.returncode == 0, out.stderr
    for where, data in before.items():
        assert (home / where).read_bytes() == data, where


def test_the_listing_hides_tokens_in_command_lines(home: Path) -> None:
    desktop = home / LAYOUT["claude_desktop_config.json"]
    text = desktop.read_text()
    desktop.write_text(text.replace('"--db-path"', '"--api-key", "abc123", "--db-path"'))
    out = gatewatch("clients")
    assert out.returncode == 0, out.stderr
    assert "uvx mcp-server-sqlite --api-key [redacted] --db-path" in out.stdout
    assert "abc123" not in out.stdout


def test_backups_keep_the_first_copy_and_the_latest(home: Path, gw_home: Path) -> None:
    from proxy.clients.files import KEEP_RECENT, backup

    config = home / LAYOUT["gemini_settings.json"]
    made = []
    for i in range(KEEP_RECENT + 3):
        config.write_text(f"version {i}")
        made.append(backup(config, "gemini"))
    kept = sorted(made[0].parent.iterdir())
    assert kept == [made[0], *made[-KEEP_RECENT:]]
    assert kept[0].read_text() == "version 0"


def test_dry_run_shows_the_diff_and_writes_nothing(home: Path) -> None:
    codex = home / LAYOUT["codex_config.toml"]
    before = codex.read_bytes()
    out = gatewatch("wrap", "codex", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert '-command = "npx"   # launcher' in out.stdout
    assert f'+command = "{EXE}"   # launcher' in out.stdout
    assert codex.read_bytes() == before


def test_without_confirmation_nothing_is_written(home: Path) -> None:
    before = (home / LAYOUT["vscode_mcp.json"]).read_bytes()
    out = gatewatch("wrap", "vscode")
    assert out.returncode == 1 and "--yes" in out.stderr
    assert (home / LAYOUT["vscode_mcp.json"]).read_bytes() == before


def test_one_server_of_one_client(home: Path) -> None:
    out = gatewatch("wrap", "claude-desktop", "--server", "github", "--yes")
    assert out.returncode == 0, out.stderr
    assert listing()["claude-desktop"] == {
        "filesystem": False, "github": True, "sqlite": False, "time": False}


def test_a_file_changed_after_the_preview_is_left_alone(home: Path) -> None:
    zed = home / LAYOUT["zed_settings.json"]
    plan = changes.make_plan("wrap", changes.load_all(), changes.select("zed"), exe=EXE)
    assert [c.config.path for c in plan.changes] == [zed]
    edited = zed.read_text().replace('"vim_mode": false', '"vim_mode": true')
    zed.write_text(edited)
    done = changes.apply(plan)
    assert done.written == []
    assert "changed since the preview" in done.failed[0][1]
    assert zed.read_text() == edited


def test_a_file_added_by_path_is_listed_and_wrapped(home: Path, tmp_path: Path) -> None:
    custom = tmp_path / "somewhere" / "agent-mcp.json"
    custom.parent.mkdir()
    custom.write_text('{\n  "mcpServers": {\n    "x": {"command": "x-server", "args": ["--v"]}\n'
                      "  }\n}\n")
    out = gatewatch("clients", "--add", str(custom))
    assert out.returncode == 0, out.stderr
    assert listing()["custom"] == {"x": False}
    out = gatewatch("wrap", "--path", str(custom), "--yes")
    assert out.returncode == 0, out.stderr
    assert listing()["custom"] == {"x": True}
    assert gatewatch("clients", "--forget", str(custom)).returncode == 0
    assert "custom" not in listing()


def test_adding_a_broken_file_names_the_line(home: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "mcpServers": {\n    "x": {"command": }\n  }\n}\n')
    out = gatewatch("clients", "--add", str(broken))
    assert out.returncode == 1
    assert f"{broken}:3:" in out.stderr


def test_a_symlinked_config_stays_a_symlink(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "zed-settings.json"
    dotfiles.parent.mkdir()
    zed = home / LAYOUT["zed_settings.json"]
    shutil.move(zed, dotfiles)
    zed.symlink_to(dotfiles)
    out = gatewatch("wrap", "zed", "--yes")
    assert out.returncode == 0, out.stderr
    assert zed.is_symlink() and zed.resolve() == dotfiles
    assert listing()["zed"] == {"mcp-server-git": True, "brave-search": True}


def test_unwrap_everything_and_health(home: Path) -> None:
    changes.apply(changes.make_plan("wrap", changes.load_all(), exe="/gone/bin/gatewatch"))
    problems = [h for loaded in changes.load_all() for h in health.check(loaded)]
    assert problems and all(h.wrapped for h in problems)
    assert all("does not exist" in (h.problem or "") for h in problems)
    done = changes.unwrap_everything()
    assert not done.failed and len(done.written) == len(LAYOUT)
    for loaded in changes.load_all():
        assert not any(e.wrapped for e in loaded.entries if e.transport is Transport.STDIO)
    for fixture, where in LAYOUT.items():
        assert (home / where).read_bytes() == (FIXTURES / fixture).read_bytes()


def test_a_healthy_wrap_has_no_problem(home: Path) -> None:
    changes.apply(changes.make_plan("wrap", changes.load_all(), changes.select("cline"),
                                    exe=EXE))
    cline = [h for loaded in changes.load_all() if loaded.config.client.id == "cline"
             for h in health.check(loaded)]
    assert [(h.server, h.wrapped, h.problem) for h in cline] == [("memory", True, None)]
    assert os.access(EXE, os.X_OK)


def test_the_unprotected_servers_are_counted_per_client(home: Path) -> None:
    from proxy.clients.summary import unprotected

    loaded = changes.load_all()
    before = unprotected(loaded)
    assert before.per_client == {
        "claude-desktop": 4, "claude-code": 2, "vscode": 2, "zed": 2, "codex": 3, "goose": 3,
        "continue": 2, "cline": 1, "gemini": 1}
    assert before.sentence() == "20 servers in 9 clients are not protected"
    changes.apply(changes.make_plan("wrap", loaded, changes.select("codex"), exe=EXE))
    after = unprotected(changes.load_all())
    assert "codex" not in after.per_client
    assert after.sentence() == "17 servers in 8 clients are not protected"
    changes.apply(changes.make_plan("wrap", changes.load_all(), exe=EXE))
    assert unprotected(changes.load_all()).sentence() == ""


def test_the_listing_ends_with_what_is_not_protected(home: Path) -> None:
    out = gatewatch("clients")
    assert out.stdout.rstrip().endswith(
        "20 servers in 9 clients are not protected. "
        "Preview the change with `gatewatch wrap --all --dry-run`.")
