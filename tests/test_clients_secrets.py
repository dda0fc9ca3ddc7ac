"""Secrets move into a real (file-based) keyring on wrap, come back on unwrap, and
`gatewatch run` resolves the references before it starts the upstream."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyrings.alt.file import PlaintextKeyring

from proxy.clients import changes, discovery, secrets
from proxy.clients.catalog import CLIENTS
from tests.support import child_env

FIXTURES = Path(__file__).parent / "fixtures" / "clients"
TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
EXE = str(Path(sys.executable).parent / "gatewatch")
# The test keyring is a plaintext file: moving into it needs the user's explicit agreement.
MOVE = {"secrets_to_keyring": True, "allow_plaintext_keyring": True}


@pytest.fixture
def test_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A plaintext keyring file under tmp_path, for this process and its children."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    backend = PlaintextKeyring()
    file = tmp_path / "xdg-data" / "python_keyring" / backend.filename
    backend.file_path = str(file)  # the path a child process derives from XDG_DATA_HOME
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield file
    keyring.set_keyring(previous)


def desktop_config(tmp_path: Path) -> discovery.ConfigFile:
    path = tmp_path / "claude_desktop_config.json"
    shutil.copy(FIXTURES / "claude_desktop_config.json", path)
    return discovery.ConfigFile(CLIENTS["claude-desktop"], path, "user", "json")


def test_wrap_moves_the_token_to_the_keyring_and_unwrap_brings_it_back(
    tmp_path: Path, test_keyring: Path
) -> None:
    config = desktop_config(tmp_path)
    original = config.path.read_bytes()
    plan = changes.make_plan("wrap", [discovery.load(config)], **MOVE, exe=EXE)
    assert TOKEN not in plan.preview()  # the preview masks it
    assert not plan.notes
    done = changes.apply(plan)
    assert not done.failed
    text = config.path.read_text()
    assert TOKEN not in text
    username = "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN"
    assert f'"gatewatch-keyring:{username}"' in text
    # In the keyring's own file (the plaintext test backend stores base64).
    assert base64.b64encode(TOKEN.encode()).decode() in test_keyring.read_text()
    assert keyring.get_password("gatewatch", username) == TOKEN
    # Non-secret values stay where they were.
    assert '"C:\\\\Users\\\\me\\\\test.db"' in text

    done = changes.apply(changes.make_plan("unwrap", [discovery.load(config)]))
    assert not done.failed
    assert config.path.read_bytes() == original
    assert keyring.get_password("gatewatch", username) is None


def test_two_entries_with_the_same_name_and_token_get_their_own_keyring_names(
    tmp_path: Path, test_keyring: Path
) -> None:
    """Claude Code's user scope and a project scope may both have `github`."""
    github = {"command": "npx", "args": ["gh"], "env": {"GH_TOKEN": TOKEN}}
    path = tmp_path / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {"github": github},
                                "projects": {"/p": {"mcpServers": {"github": github}}}}))
    config = discovery.ConfigFile(CLIENTS["claude-code"], path, "user", "json")
    changes.apply(changes.make_plan("wrap", [discovery.load(config)], **MOVE,
                                    exe=EXE))
    refs = {e.scope: e.env["GH_TOKEN"] for e in discovery.load(config).entries}
    assert refs == {"": "gatewatch-keyring:claude-code/github/GH_TOKEN",
                    "/p": "gatewatch-keyring:claude-code/github/GH_TOKEN#2"}
    # Unwrapping one (which deletes its keyring entry) leaves the other working.
    changes.apply(changes.make_plan("unwrap", [discovery.load(config)],
                                    lambda c, e: e.scope == ""))
    assert secrets.resolve_env_refs({"T": refs["/p"]}) == {"T": TOKEN}
    with pytest.raises(secrets.KeyringError):
        secrets.resolve_env_refs({"T": refs[""]})


def test_the_same_server_in_two_files_gets_two_keyring_names(
    tmp_path: Path, test_keyring: Path
) -> None:
    loaded = []
    for name in ("a", "b"):
        path = tmp_path / name / ".mcp.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"mcpServers": {"github": {
            "command": "npx", "args": ["gh"], "env": {"GH_TOKEN": f"ghp_{name * 36}"}}}}))
        loaded.append(discovery.load(
            discovery.ConfigFile(CLIENTS["claude-code"], path, "project", "json")))
    changes.apply(changes.make_plan("wrap", loaded, **MOVE, exe=EXE))
    for name, suffix in (("a", ""), ("b", "#2")):
        path = tmp_path / name / ".mcp.json"
        ref = json.loads(path.read_text())["mcpServers"]["github"]["env"]["GH_TOKEN"]
        assert ref == f"gatewatch-keyring:claude-code/github/GH_TOKEN{suffix}"
        assert secrets.resolve_env_refs({"T": ref}) == {"T": f"ghp_{name * 36}"}


def test_a_name_taken_in_the_keyring_gets_a_number(tmp_path: Path, test_keyring: Path) -> None:
    keyring.set_password("gatewatch", "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN", "old")
    config = desktop_config(tmp_path)
    changes.apply(changes.make_plan("wrap", [discovery.load(config)], **MOVE,
                                    exe=EXE))
    github = next(e for e in discovery.load(config).entries if e.name == "github")
    assert github.env["GITHUB_PERSONAL_ACCESS_TOKEN"].endswith("GITHUB_PERSONAL_ACCESS_TOKEN#2")
    assert keyring.get_password(
        "gatewatch", "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN") == "old"


def test_a_stale_file_leaves_no_secret_behind(tmp_path: Path, test_keyring: Path) -> None:
    config = desktop_config(tmp_path)
    plan = changes.make_plan("wrap", [discovery.load(config)], **MOVE, exe=EXE)
    config.path.write_text(config.path.read_text() + "\n")
    done = changes.apply(plan)
    assert done.failed and not done.written
    assert keyring.get_password(
        "gatewatch", "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN") is None


def test_a_dangling_reference_keeps_the_server_wrapped(
    tmp_path: Path, test_keyring: Path
) -> None:
    config = desktop_config(tmp_path)
    changes.apply(changes.make_plan("wrap", [discovery.load(config)], **MOVE,
                                    exe=EXE))
    keyring.delete_password("gatewatch", "claude-desktop/github/GITHUB_PERSONAL_ACCESS_TOKEN")
    plan = changes.make_plan("unwrap", [discovery.load(config)])
    assert [(s.server, "left wrapped" in s.reason) for s in plan.skipped] == [
        ("github", True), ("linear", False)]
    changes.apply(plan)
    github = next(e for e in discovery.load(config).entries if e.name == "github")
    assert github.wrapped


def test_without_a_usable_keyring_nothing_moves_and_the_user_is_told(tmp_path: Path) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        config = desktop_config(tmp_path)
        plan = changes.make_plan("wrap", [discovery.load(config)], **MOVE,
                                 exe=EXE)
    finally:
        keyring.set_keyring(previous)
    assert any("no usable keyring backend" in note for note in plan.notes)
    changes.apply(plan)
    entries = {e.name: e for e in discovery.load(config).entries}
    assert entries["github"].wrapped  # wrapping still happens
    assert entries["github"].env["GITHUB_PERSONAL_ACCESS_TOKEN"] == TOKEN


def test_resolve_env_refs(test_keyring: Path) -> None:
    keyring.set_password("gatewatch", "cursor/gh/TOKEN", "s3cret")
    env = {"PATH": "/bin", "TOKEN": "gatewatch-keyring:cursor/gh/TOKEN"}
    assert secrets.resolve_env_refs(env) == {"PATH": "/bin", "TOKEN": "s3cret"}
    with pytest.raises(secrets.KeyringError, match=r"env OTHER: .*cursor/gh/MISSING"):
        secrets.resolve_env_refs({"OTHER": "gatewatch-keyring:cursor/gh/MISSING"})


def test_resolving_an_env_without_references_does_not_load_keyring() -> None:
    code = ("import sys; from proxy.clients.secrets import resolve_env_refs; "
            "resolve_env_refs({'A': 'b'}); print('keyring' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                         text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_x", True),
    ("OPENAI_API_KEY", "abc", True),
    ("DB_PASSWORD", "hunter2", True),
    ("GITLAB_PAT", "x", True),
    ("ANYTHING", "sk-proj-abcdefghijklmnopqrstuv", True),
    ("SLACK", "xoxb-1234567890-abcdef", True),
    ("GIT_AUTHOR_NAME", "Me", False),
    ("MEMORY_FILE_PATH", "${HOME}/.memory.json", False),
    ("PERPLEXITY_API_KEY", "${input:perplexity-key}", False),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/creds.json", False),
    ("API_TOKEN", "gatewatch-keyring:x/y/API_TOKEN", False),
    ("KEYBOARD_LAYOUT", "us", False),
])
def test_looks_secret(name: str, value: str, secret: bool) -> None:
    assert secrets.looks_secret(name, value) is secret


@pytest.mark.e2e
def test_gatewatch_run_resolves_the_reference_before_starting_the_upstream(
    tmp_path: Path, test_keyring: Path
) -> None:
    keyring.set_password("gatewatch", "codex/docs/DOCS_TOKEN", "the-real-token")
    seen = tmp_path / "seen.txt"
    upstream = ("import os, pathlib, sys; "
                f"pathlib.Path({str(seen)!r}).write_text(os.environ['DOCS_TOKEN'])")
    cmd = [EXE, "run", "--name", "docs", "--", sys.executable, "-c", upstream]
    env = child_env({"DOCS_TOKEN": "gatewatch-keyring:codex/docs/DOCS_TOKEN"})
    subprocess.run(cmd, env=env, input=b"", capture_output=True, timeout=60)
    assert seen.read_text() == "the-real-token"

    seen.unlink()
    env["DOCS_TOKEN"] = "gatewatch-keyring:codex/docs/GONE"
    out = subprocess.run(cmd, env=env, input=b"", capture_output=True, timeout=60)
    assert out.returncode != 0
    assert b"DOCS_TOKEN" in out.stderr
    assert not seen.exists()  # fail closed: the upstream never started


def test_a_plaintext_keyring_is_refused_unless_the_user_agrees(
    tmp_path: Path, test_keyring: Path
) -> None:
    config = desktop_config(tmp_path)
    plan = changes.make_plan("wrap", [discovery.load(config)], secrets_to_keyring=True, exe=EXE)
    assert any("PlaintextKeyring" in n and "--allow-plaintext-keyring" in n for n in plan.notes)
    assert not any(c.to_store for c in plan.changes)
    assert TOKEN in plan.changes[0].after  # still wrapped, the value stays where it was


def test_the_cli_says_what_moved_where_and_which_backups_hold_the_plaintext(
    tmp_path: Path, test_keyring: Path, gw_home: Path
) -> None:
    config = desktop_config(tmp_path)

    def wrap(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [EXE, "wrap", "--path", str(config.path), "--secrets-to-keyring", "--yes", *extra],
            env=child_env(), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    refused = wrap()
    assert refused.returncode == 0
    assert "PlaintextKeyring" in refused.stderr and "no secrets were moved" in refused.stderr
    assert TOKEN in config.path.read_text()  # wrapped, the token left in place
    subprocess.run([EXE, "unwrap", "--path", str(config.path), "--yes"], env=child_env(),
                   capture_output=True, timeout=60, check=True)

    done = wrap("--allow-plaintext-keyring")
    assert done.returncode == 0, done.stderr
    username = "custom/github/GITHUB_PERSONAL_ACCESS_TOKEN"
    assert f"github: GITHUB_PERSONAL_ACCESS_TOKEN -> keyring gatewatch / {username}" in done.stdout
    assert "PlaintextKeyring" in done.stdout
    backups = [line.strip() for line in done.stdout.splitlines()
               if line.startswith("  /") and "backups" in line]
    assert backups and all(TOKEN in Path(b).read_text() for b in backups)
    assert "still hold these values in plaintext" in done.stdout

    # Asked to, it deletes exactly those copies.
    subprocess.run([EXE, "unwrap", "--path", str(config.path), "--yes"], env=child_env(),
                   capture_output=True, timeout=60, check=True)
    again = wrap("--allow-plaintext-keyring", "--delete-plaintext-backups")
    assert "Deleted them." in again.stdout
    folder = Path(backups[0]).parent
    assert not any(TOKEN in p.read_text() for p in folder.iterdir())


def test_a_missing_secret_names_the_keyring_it_looked_in(
    test_keyring: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent-runtime")
    with pytest.raises(secrets.KeyringError) as caught:
        secrets.fetch("codex/sec/GITHUB_TOKEN")
    message = str(caught.value)
    assert "PlaintextKeyring" in message and str(test_keyring) in message
    assert "/nonexistent-runtime/bus does not exist" in message
    assert "Secret Service keyring cannot be reached" in message


def test_the_session_bus_is_found_at_its_standard_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    runtime = tmp_path / "run-user"
    runtime.mkdir()
    bus = socket.socket(socket.AF_UNIX)
    bus.bind(str(runtime / "bus"))
    try:
        monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        secrets.session_bus_fallback()
        assert secrets.os.environ["DBUS_SESSION_BUS_ADDRESS"] == f"unix:path={runtime / 'bus'}"
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/the/users/own")
        secrets.session_bus_fallback()  # never overrides what the user has
        assert secrets.os.environ["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=/the/users/own"
        # In a directory others can write to, the socket may not be the user's bus.
        monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
        runtime.chmod(0o777)
        secrets.session_bus_fallback()
        assert "DBUS_SESSION_BUS_ADDRESS" not in secrets.os.environ
    finally:
        bus.close()
