"""Wrap and unwrap realistic client configs: exact bytes back, idempotent, remote entries left."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.clients.catalog import CLIENTS
from proxy.clients.document import Document, plain_data
from proxy.clients.entries import Transport, read_entries, wrapped_original
from proxy.clients.wrapping import Editor

FIXTURES = Path(__file__).parent / "fixtures" / "clients"
EXE = "/opt/Gate Watch/bin/gatewatch"

# fixture -> (client id, stdio servers, servers left alone)
CASES = {
    "claude_desktop_config.json": ("claude-desktop", {"filesystem", "github", "sqlite", "time"},
                                   {"linear"}),
    "claude.json": ("claude-code", {"memory", "postgres"}, {"sentry"}),
    "vscode_mcp.json": ("vscode", {"fs", "perplexity"}, {"github"}),
    "zed_settings.json": ("zed", {"mcp-server-git", "brave-search"}, {"remote-thing"}),
    "codex_config.toml": ("codex", {"docs", "git", "time"}, {"figma"}),
    "goose_config.yaml": ("goose", {"github", "fetch", "plain"}, {"developer", "tavily"}),
    "continue_config.yaml": ("continue", {"SQLite", "Playwright"}, {"Remote"}),
    "cline_mcp_settings.json": ("cline", {"memory"}, set()),
    "gemini_settings.json": ("gemini", {"everything"}, set()),
}


def load(name: str, text: str | None = None) -> tuple[Document, list]:
    client = CLIENTS[CASES[name][0]]
    if text is None:
        text = (FIXTURES / name).read_bytes().decode("utf-8")
    doc = Document.parse(text, client.fmt, name)
    return doc, read_entries(doc, client.shape)


def wrap_all(name: str, text: str | None = None) -> str:
    doc, entries = load(name, text)
    editor = Editor(doc)
    for entry in entries:
        if entry.transport is Transport.STDIO:
            editor.wrap(entry, EXE)
    return editor.result()


def unwrap_all(name: str, text: str) -> str:
    doc, entries = load(name, text)
    editor = Editor(doc)
    for entry in entries:
        if entry.transport is Transport.STDIO:
            editor.unwrap(entry)
    return editor.result()


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrap_then_unwrap_gives_the_original_bytes(name: str) -> None:
    original = (FIXTURES / name).read_bytes().decode("utf-8")
    wrapped = wrap_all(name)
    assert wrapped != original
    assert unwrap_all(name, wrapped).encode("utf-8") == (FIXTURES / name).read_bytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrapped_entries_run_the_original_command_through_gatewatch(name: str) -> None:
    _, before = load(name)
    _, after = load(name, wrap_all(name))
    _, stdio, left_alone = CASES[name]
    originals = {e.name: (e.command, e.args) for e in before}
    for entry in after:
        if entry.name in left_alone:
            assert entry.transport is not Transport.STDIO and entry.skip_reason
            assert not entry.wrapped
            continue
        assert entry.name in stdio
        assert entry.command == EXE
        assert entry.args[:4] == ["run", "--name", entry.name, "--"]
        assert wrapped_original(entry.command, entry.args) == originals[entry.name]
    assert {e.name for e in after} == stdio | left_alone


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrapping_twice_changes_nothing(name: str) -> None:
    once = wrap_all(name)
    assert wrap_all(name, once) == once


@pytest.mark.parametrize("name", sorted(CASES))
def test_everything_but_the_wrapped_entries_keeps_its_values(name: str) -> None:
    fmt = CLIENTS[CASES[name][0]].fmt
    before = plain_data((FIXTURES / name).read_text("utf-8"), fmt)
    after = plain_data(wrap_all(name), fmt)
    assert isinstance(before, dict) and isinstance(after, dict)
    assert set(before) == set(after)
    for key in before:
        if key not in ("mcpServers", "servers", "context_servers", "mcp_servers", "extensions",
                       "projects"):
            assert before[key] == after[key], key


@pytest.mark.parametrize("name", ["codex_config.toml", "goose_config.yaml",
                                  "continue_config.yaml", "vscode_mcp.json"])
def test_windows_line_endings_survive_the_round_trip(name: str) -> None:
    crlf = (FIXTURES / name).read_text("utf-8").replace("\n", "\r\n")
    wrapped = wrap_all(name, crlf)
    assert "\n" not in wrapped.replace("\r\n", "")  # every inserted line ends in CRLF too
    _, entries = load(name, wrapped)
    assert all(e.wrapped for e in entries if e.transport is Transport.STDIO)
    assert unwrap_all(name, wrapped) == crlf


def test_a_moved_gatewatch_is_rewrapped_with_the_new_path() -> None:
    wrapped = wrap_all("claude_desktop_config.json")
    doc, entries = load("claude_desktop_config.json", wrapped)
    editor = Editor(doc)
    for entry in entries:
        if entry.transport is Transport.STDIO:
            assert editor.wrap(entry, "/new/place/gatewatch")
    _, again = load("claude_desktop_config.json", editor.result())
    assert {e.command for e in again if e.transport is Transport.STDIO} == {
        "/new/place/gatewatch"}
    assert all(e.args[4:5] in (["npx"], ["uvx"], ["mcp-server-time"]) for e in again if e.wrapped)


CLAUDE_CODE_STYLE = """{
  "mcpServers": {
    "mem": {
      "type": "stdio",
      "command": "/usr/bin/mcp-server-memory",
      "args": [],
      "env": {}
    }
  }
}"""

# Every shape a client writes for a server without arguments: `[]` and no args at all.
NO_ARGS_SHAPES = {
    "json-empty": ("cursor", '{"mcpServers": {"t": {"command": "srv", "args": []}}}'),
    "json-absent": ("cursor", '{"mcpServers": {"t": {"command": "srv"}}}'),
    "json-absent-multiline": ("cursor", '{"mcpServers": {"t": {\n  "command": "srv"\n}}}'),
    "json-after-type": ("cursor", '{"mcpServers": {"t": {"type": "stdio", "command": "s"}}}'),
    "json-claude-code": ("claude-code", CLAUDE_CODE_STYLE),
    "toml-absent": ("codex", '[mcp_servers.t]\ncommand = "srv"\n'),
    "toml-empty": ("codex", '[mcp_servers.t]\ncommand = "srv"\nargs = []\n'),
    "toml-inline": ("codex", 'mcp_servers.t = { command = "srv" }\n'),
    "yaml-empty": ("goose", "extensions:\n  t:\n    type: stdio\n    cmd: srv\n    args: []\n"),
    "yaml-absent": ("goose", "extensions:\n  t:\n    type: stdio\n    cmd: srv\n"),
}


def _edit(client: str, text: str, action: str) -> str:
    shape, fmt = CLIENTS[client].shape, CLIENTS[client].fmt
    doc = Document.parse(text, fmt)
    editor = Editor(doc)
    for entry in read_entries(doc, shape):
        editor.wrap(entry, EXE) if action == "wrap" else editor.unwrap(entry)
    return editor.result()


@pytest.mark.parametrize("shape", sorted(NO_ARGS_SHAPES))
def test_a_server_without_arguments_comes_back_byte_for_byte(shape: str) -> None:
    client, text = NO_ARGS_SHAPES[shape]
    wrapped = _edit(client, text, "wrap")
    entry = read_entries(Document.parse(wrapped, CLIENTS[client].fmt), CLIENTS[client].shape)[0]
    assert entry.wrapped and entry.original == (entry.original[0], [])
    assert _edit(client, wrapped, "unwrap") == text


def test_a_client_rewriting_the_wrapped_file_still_gets_its_empty_args_back() -> None:
    """Claude Code rewrites ~/.claude.json with JSON.stringify(…, 2): every list on its own
    lines. Unwrapping that rewrite gives what the client itself would write unwrapped."""
    import json

    original = json.loads(CLAUDE_CODE_STYLE)
    rewritten = json.dumps(json.loads(_edit("claude-code", CLAUDE_CODE_STYLE, "wrap")), indent=2)
    assert json.loads(_edit("claude-code", rewritten, "unwrap")) == original
    absent = {"mcpServers": {"t": {"command": "srv"}}}
    rewritten = json.dumps(json.loads(_edit("cursor", json.dumps(absent), "wrap")), indent=2)
    assert json.loads(_edit("cursor", rewritten, "unwrap")) == absent


def test_codex_entries_pass_gatewatchs_environment_through() -> None:
    from proxy.clients.catalog import GATEWATCH_ENV

    text = ('[mcp_servers.a]\ncommand = "srv"\n\n'
            '[mcp_servers.b]\ncommand = "srv"\nenv_vars = ["FOO", "XDG_DATA_HOME"]\n')
    wrapped = _edit("codex", text, "wrap")
    data = plain_data(wrapped, "toml")["mcp_servers"]
    assert data["a"]["env_vars"] == list(GATEWATCH_ENV)
    assert data["b"]["env_vars"] == ["FOO", "XDG_DATA_HOME", *GATEWATCH_ENV]
    assert _edit("codex", wrapped, "wrap") == wrapped  # twice changes nothing
    assert _edit("codex", wrapped, "unwrap") == text
    # Another client's file never gets the list.
    assert "env_vars" not in _edit("cursor", '{"mcpServers": {"t": {"command": "s"}}}', "wrap")


def test_a_codex_entry_wrapped_before_env_vars_existed_gets_them_on_rewrap() -> None:
    old = f'[mcp_servers.t]\ncommand = "{EXE}"\nargs = ["run", "--name", "t", "--", "srv"]\n'
    rewrapped = _edit("codex", old, "wrap")
    assert "env_vars = [" in rewrapped
    assert _edit("codex", rewrapped, "unwrap") == '[mcp_servers.t]\ncommand = "srv"\nargs = []\n'


def test_entries_that_cannot_be_wrapped_say_why() -> None:
    text = """{"mcpServers": {
      "self": {"command": "/opt/gw/bin/gatewatch", "args": ["serve"]},
      "ext": {"settings": {"key": "v"}},
      "odd": {"command": "x", "args": ["a", 3]},
      "remote": {"type": "sse", "url": "http://localhost:1/sse"}
    }}"""
    reasons = {e.name: e.skip_reason for e in read_entries(Document.parse(text, "json"),
                                                           CLIENTS["cursor"].shape)}
    assert reasons == {
        "self": "this is Gatewatch's own server",
        "ext": "provided by an editor extension",
        "odd": "args is not a list of strings",
        "remote": "remote server (URL): nothing runs locally to wrap",
    }


def test_a_broken_file_names_the_line_and_column() -> None:
    from proxy.clients.nodes import ConfigSyntaxError

    with pytest.raises(ConfigSyntaxError) as caught:
        Document.parse('{\n  "mcpServers": {\n    "a": {"command": "x",,}\n  }\n}', "json",
                       "/tmp/broken.json")
    assert "/tmp/broken.json:3:" in str(caught.value)
    assert "fix the file by hand" in str(caught.value)
