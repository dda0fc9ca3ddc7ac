"""The real client CLIs (Claude Code, Gemini CLI, Codex from tests/npm) with Gatewatch: servers
registered with the client's own `mcp add` in a throw-away HOME, `gatewatch wrap`, the client's
own health check connects through the proxy, the audit names the client, `gatewatch unwrap`
gives the file back byte for byte. No account and no network is needed; every call has a
timeout and the clients' update checks and telemetry are switched off."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import NPM_BIN, npm_server

pytestmark = pytest.mark.e2e

EXE = str(Path(sys.executable).parent / "gatewatch")
QUIET = {
    # Claude Code
    "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # Gemini CLI (telemetry is off unless configured) and npm's own notifier
    "GEMINI_CLI_NO_RELAUNCH": "1", "NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1",
}
TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"


def client_bin(name: str) -> str:
    path = NPM_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `bash tests/run.sh` (it installs the client CLIs)")
    return str(path)


class Machine:
    """A user's HOME with one project folder, and the environment the user's shell has."""

    def __init__(self, root: Path, gw_home: Path | None) -> None:
        self.home = root / "home"
        self.project = self.home / "proj"
        self.project.mkdir(parents=True)
        self.env = {
            "HOME": str(self.home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
            "TERM": "dumb", "GATEWATCH_EXECUTABLE": EXE, **QUIET,
        }
        if gw_home is not None:
            self.env["GATEWATCH_HOME"] = str(gw_home)

    def run(self, *argv: str, timeout: float = 90, **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=self.project, env=self.env, text=True,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              check=False, **kw)

    def ok(self, *argv: str) -> str:
        done = self.run(*argv)
        assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def said(self, *argv: str) -> str:
        """Everything a successful command printed (Gemini CLI lists on stderr off a terminal)."""
        done = self.run(*argv)
        assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def gatewatch(self, *args: str) -> str:
        return self.ok(EXE, *args)


def sessions(db: Path) -> list[sqlite3.Row]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM sessions ORDER BY started_at").fetchall()


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def all_ended(db: Path, count: int) -> Callable[[], list[sqlite3.Row] | None]:
    def check() -> list[sqlite3.Row] | None:
        rows = sessions(db)
        return rows if len(rows) >= count and all(r["ended_at"] for r in rows) else None
    return check


def logged_clients(machine: Machine) -> set[tuple[str, str]]:
    out = machine.gatewatch("logs", "--json", "--tail", "1000")
    return {(r["server"], r["client"]) for r in map(json.loads, out.splitlines())}


# -- Claude Code ------------------------------------------------------------------------------

def test_claude_code(tmp_path: Path, gw_home: Path) -> None:
    machine = Machine(tmp_path, gw_home)
    claude = client_bin("claude")
    config = machine.home / ".claude.json"
    # User scope without arguments (written as "args": []) and local scope (under `projects`).
    machine.ok(claude, "mcp", "add", "-s", "user", "mem", "--", npm_server("memory"))
    machine.ok(claude, "mcp", "add", "-s", "local", "fs", "--", npm_server("filesystem"),
               str(machine.project))
    assert '"args": []' in config.read_text()
    # A first run writes Claude Code's own state (userID); a user's file already has it.
    assert "Connected" in machine.ok(claude, "mcp", "list")
    before = config.read_bytes()

    listing = machine.gatewatch("clients")
    assert "unprotected" in listing and f"[project {machine.project}]" in listing
    machine.gatewatch("wrap", "claude-code", "--yes")
    health = machine.ok(claude, "mcp", "list")
    for name in ("mem", "fs"):
        line = next(x for x in health.splitlines() if x.startswith(f"{name}:"))
        assert f"gatewatch run --name {name} --" in line and "Connected" in line, health

    db = gw_home / "data" / "gatewatch.db"
    ended = wait_for("both sessions to record their end", all_ended(db, 2))
    assert {(r["server"], r["client_name"]) for r in ended} == {
        ("mem", "claude-code"), ("fs", "claude-code")}
    assert {client.split()[0] for _, client in logged_clients(machine)} == {"claude-code"}

    machine.gatewatch("unwrap", "claude-code", "--yes")
    assert config.read_bytes() == before


def test_claude_code_config_dir(tmp_path: Path, gw_home: Path) -> None:
    machine = Machine(tmp_path, gw_home)
    machine.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-config")
    claude = client_bin("claude")
    machine.ok(claude, "mcp", "add", "-s", "user", "mem", "--", npm_server("memory"))
    config = tmp_path / "claude-config" / ".claude.json"
    assert "Connected" in machine.ok(claude, "mcp", "list")
    before = config.read_bytes()
    machine.gatewatch("wrap", "claude-code", "--yes")
    assert "Connected" in machine.ok(claude, "mcp", "list")
    assert [r["server"] for r in sessions(gw_home / "data" / "gatewatch.db")] == ["mem"]
    assert not (machine.home / ".claude.json").exists()
    machine.gatewatch("unwrap", "claude-code", "--yes")
    assert config.read_bytes() == before


# A server that answers the handshake but, once its stdin closes, takes seconds to exit: longer
# than Claude Code waits (SIGINT, SIGTERM after 100 ms, SIGKILL 400 ms later).
SLOW_TO_EXIT = r"""
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        out = {"result": {"protocolVersion": msg["params"]["protocolVersion"],
                          "capabilities": {"tools": {}},
                          "serverInfo": {"name": "slow", "version": "1"}}}
    elif msg["method"] == "tools/list":
        out = {"result": {"tools": []}}
    else:
        out = {"error": {"code": -32601, "message": "no such method"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **out}), flush=True)
time.sleep(4)
"""


def test_a_session_killed_by_claude_code_still_records_its_end(
    tmp_path: Path, gw_home: Path
) -> None:
    machine = Machine(tmp_path, gw_home)
    claude = client_bin("claude")
    machine.ok(claude, "mcp", "add", "-s", "user", "slow", "--", sys.executable, "-c",
               SLOW_TO_EXIT)
    machine.gatewatch("wrap", "claude-code", "--yes")
    assert "Connected" in machine.ok(claude, "mcp", "list")
    db = gw_home / "data" / "gatewatch.db"
    (row,) = wait_for("the session's end", all_ended(db, 1))
    assert row["end_reason"] == "signal"


# -- Gemini CLI -------------------------------------------------------------------------------

def test_gemini_cli(tmp_path: Path, gw_home: Path) -> None:
    machine = Machine(tmp_path, gw_home)
    gemini = client_bin("gemini")
    # Project scope (the default) in a trusted folder; user scope without arguments.
    (machine.home / ".gemini").mkdir()
    (machine.home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(machine.project): "TRUST_FOLDER"}))
    machine.ok(gemini, "mcp", "add", "-s", "user", "mem", npm_server("memory"))
    machine.ok(gemini, "mcp", "add", "fs", npm_server("filesystem"), str(machine.project))
    files = [machine.home / ".gemini" / "settings.json",
             machine.project / ".gemini" / "settings.json"]
    assert all('"args": []' in f.read_text() or "fs" in f.read_text() for f in files)
    before = [f.read_bytes() for f in files]

    machine.gatewatch("wrap", "gemini", "--yes")
    health = machine.said(gemini, "mcp", "list")
    for name in ("mem", "fs"):
        line = next(x for x in health.splitlines() if f" {name}:" in x)
        assert "gatewatch run --name" in line and "Connected" in line, health

    db = gw_home / "data" / "gatewatch.db"
    ended = wait_for("both sessions to end", all_ended(db, 2))
    assert {r["server"] for r in ended} == {"mem", "fs"}
    # `gemini mcp list` introduces itself as its test client; a chat session as gemini-cli's.
    assert {r["client_name"] for r in ended} == {"mcp-test-client"}
    assert {s for s, c in logged_clients(machine) if c.startswith("mcp-test-client")} == {
        "mem", "fs"}

    machine.gatewatch("unwrap", "gemini", "--yes")
    assert [f.read_bytes() for f in files] == before


# -- Codex ------------------------------------------------------------------------------------

def codex_server_status(machine: Machine) -> list[dict[str, Any]]:
    """Codex's app-server connects every configured server for `mcpServerStatus/list`."""
    proc = subprocess.Popen([client_bin("codex"), "app-server"], cwd=machine.project,
                            env=machine.env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in (
            {"id": 1, "method": "initialize",
             "params": {"clientInfo": {"name": "gatewatch-tests", "version": "1"}}},
            {"method": "initialized"},
            {"id": 2, "method": "mcpServerStatus/list", "params": {}},
        ):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        import selectors

        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            line = proc.stdout.readline()
            if not line:
                break
            reply = json.loads(line)
            if reply.get("id") == 2:
                assert "result" in reply, reply
                return list(reply["result"]["data"])
        pytest.fail("codex app-server did not answer mcpServerStatus/list")
    finally:
        proc.stdin.close()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_codex(tmp_path: Path, gw_home: Path) -> None:
    machine = Machine(tmp_path, gw_home)
    codex = client_bin("codex")
    machine.ok(codex, "mcp", "add", "mem", "--", npm_server("memory"))  # no `args` at all
    machine.ok(codex, "mcp", "add", "fs", "--", npm_server("filesystem"), str(machine.project))
    config = machine.home / ".codex" / "config.toml"
    before = config.read_bytes()

    machine.gatewatch("wrap", "codex", "--yes")
    assert "gatewatch" in machine.ok(codex, "mcp", "list")  # Codex reads the wrapped file
    status = {s["name"]: s for s in codex_server_status(machine)}
    assert set(status) == {"mem", "fs"}
    assert "read_graph" in status["mem"]["tools"], status["mem"]
    assert "list_directory" in status["fs"]["tools"], status["fs"]

    # Codex ends its servers with SIGTERM and SIGKILL a millisecond later (to the process
    # group): no time for any process to record its end, so only the start is checked.
    db = gw_home / "data" / "gatewatch.db"
    started = wait_for("both sessions", lambda: len(sessions(db)) == 2 and sessions(db))
    assert {(r["server"], r["client_name"]) for r in started} == {
        ("mem", "codex-mcp-client"), ("fs", "codex-mcp-client")}
    # Its frames, under its name. (What the proxy saw in its last batch window, 50 ms, before
    # the SIGKILL is lost; the handshake is long before that with these node servers.)
    logged = [json.loads(line) for line in machine.gatewatch(
        "logs", "--json", "--method", "initialize").splitlines()]
    assert {(r["server"], r["client"].split()[0]) for r in logged if r["direction"] == "c2s"} == {
        ("mem", "codex-mcp-client"), ("fs", "codex-mcp-client")}

    machine.gatewatch("unwrap", "codex", "--yes")
    assert config.read_bytes() == before


def test_a_codex_launched_proxy_finds_the_users_data_dir_and_keyring(tmp_path: Path) -> None:
    """The user keeps XDG_DATA_HOME / XDG_CONFIG_HOME elsewhere and a keyring file backend;
    Codex starts servers with HOME, LANG, PATH, SHELL, TERM and little more."""
    machine = Machine(tmp_path, gw_home=None)
    machine.env.update({
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
    })
    codex = client_bin("codex")
    seen = tmp_path / "token-the-server-got"
    script = f'printf %s "$GITHUB_TOKEN" > {seen}; exec {npm_server("memory")}'
    machine.ok(codex, "mcp", "add", "sec", "--env", f"GITHUB_TOKEN={TOKEN}", "--",
               "/bin/sh", "-c", script)
    config = machine.home / ".codex" / "config.toml"
    before = config.read_bytes()

    out = machine.gatewatch("wrap", "codex", "--secrets-to-keyring", "--allow-plaintext-keyring",
                            "--yes")
    assert "GITHUB_TOKEN -> keyring gatewatch / codex/sec/GITHUB_TOKEN" in out
    assert TOKEN not in config.read_text()
    keyring_file = tmp_path / "xdg-data" / "python_keyring" / "keyring_pass.cfg"
    assert keyring_file.exists()

    status = {s["name"]: s for s in codex_server_status(machine)}
    assert "read_graph" in status["sec"]["tools"], status["sec"]
    assert seen.read_text() == TOKEN  # resolved from the keyring in the stripped environment
    db = tmp_path / "xdg-data" / "gatewatch" / "gatewatch.db"  # the user's, not a second one
    (row,) = wait_for("the session", lambda: sessions(db))
    assert row["client_name"] == "codex-mcp-client"
    assert not (machine.home / ".local" / "share" / "gatewatch").exists()

    machine.gatewatch("unwrap", "codex", "--yes")
    assert config.read_bytes() == before


@pytest.fixture
def secret_service(tmp_path: Path) -> Iterator[Path]:
    """A session bus at <runtime dir>/bus with GNOME Keyring's Secret Service on it (unlocked);
    yields the runtime dir."""
    import shutil

    if not (shutil.which("dbus-daemon") and shutil.which("gnome-keyring-daemon")):
        pytest.skip("needs dbus-daemon and gnome-keyring (.ci/run installs them)")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    bus = runtime / "bus"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "keyring-home"),
           "XDG_RUNTIME_DIR": str(runtime), "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}"}
    daemons = [subprocess.Popen(
        ["dbus-daemon", "--session", f"--address=unix:path={bus}", "--nofork", "--nopidfile"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        wait_for("the session bus", bus.is_socket)
        keyring_daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        daemons.append(keyring_daemon)
        assert keyring_daemon.stdin is not None
        keyring_daemon.stdin.write(b"test-password")
        keyring_daemon.stdin.close()
        probe = [sys.executable, "-c", "import secretstorage as s; "
                 "s.get_default_collection(s.dbus_init()).is_locked() and exit(1)"]
        wait_for("GNOME Keyring on the bus", lambda: subprocess.run(
            probe, env=env, capture_output=True, timeout=20, check=False).returncode == 0)
        yield runtime
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            daemon.wait(10)


def test_a_codex_launched_proxy_reaches_the_secret_service_on_the_standard_bus_path(
    tmp_path: Path, secret_service: Path
) -> None:
    """Codex started without DBUS_SESSION_BUS_ADDRESS (as from a service manager): the proxy
    finds the user's bus at $XDG_RUNTIME_DIR/bus and reads the secret from GNOME Keyring."""
    machine = Machine(tmp_path, gw_home=None)
    machine.env.update({"XDG_RUNTIME_DIR": str(secret_service),
                        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
                        "PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"})
    codex = client_bin("codex")
    seen = tmp_path / "token-the-server-got"
    script = f'printf %s "$GITHUB_TOKEN" > {seen}; exec {npm_server("memory")}'
    machine.ok(codex, "mcp", "add", "sec", "--env", f"GITHUB_TOKEN={TOKEN}", "--",
               "/bin/sh", "-c", script)
    # The user's terminal has the bus address; wrap stores the token in GNOME Keyring.
    machine.env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={secret_service / 'bus'}"
    out = machine.gatewatch("wrap", "codex", "--secrets-to-keyring", "--yes")
    assert "into the keyring (SecretService Keyring)" in out
    assert TOKEN not in (machine.home / ".codex" / "config.toml").read_text()

    del machine.env["DBUS_SESSION_BUS_ADDRESS"]
    status = {s["name"]: s for s in codex_server_status(machine)}
    assert "read_graph" in status["sec"]["tools"], status["sec"]
    assert seen.read_text() == TOKEN
