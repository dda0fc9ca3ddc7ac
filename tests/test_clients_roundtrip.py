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


def test_an_empty_args_list_comes_back_as_no_args() -> None:
    """The documented limit of marker-free unwrapping: `args: []` and no `args` look the same."""
    text = '{"mcpServers": {"t": {"command": "srv", "args": []}}}'
    doc = Document.parse(text, "json")
    editor = Editor(doc)
    editor.wrap(read_entries(doc, CLIENTS["cursor"].shape)[0], EXE)
    wrapped = editor.result()
    assert '"args": ["run", "--name", "t", "--", "srv"]' in wrapped
    doc = Document.parse(wrapped, "json")
    editor = Editor(doc)
    editor.unwrap(read_entries(doc, CLIENTS["cursor"].shape)[0])
    assert editor.result() == '{"mcpServers": {"t": {"command": "srv"}}}'


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
