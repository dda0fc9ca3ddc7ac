"""A wrapped config actually works: launch exactly the wrapped entry's command line with the
mcp SDK client and talk to the real filesystem server through `gatewatch run`."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from proxy.clients import changes, discovery
from proxy.clients.catalog import CLIENTS
from tests.support import child_env, npm_server

EXE = str(Path(sys.executable).parent / "gatewatch")


@pytest.mark.e2e
async def test_the_wrapped_entry_lists_the_filesystem_servers_tools(
    tmp_path: Path, gw_home: Path
) -> None:
    from mcp import Client, StdioServerParameters

    shared = tmp_path / "shared"
    shared.mkdir()
    config_path = tmp_path / "claude_desktop_config.json"
    config_path.write_text(json.dumps(
        {"mcpServers": {"fs": {"command": npm_server("filesystem"), "args": [str(shared)]}}},
        indent=2))
    config = discovery.ConfigFile(CLIENTS["claude-desktop"], config_path, "user", "json")
    done = changes.apply(changes.make_plan("wrap", [discovery.load(config)], exe=EXE))
    assert not done.failed

    entry = discovery.load(config).entries[0]
    assert entry.wrapped and entry.command == EXE
    params = StdioServerParameters(command=entry.command, args=entry.args, env=child_env())
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert {"read_text_file", "list_directory", "write_file"} <= tools

    # The proxy in between recorded the session under the entry's name.
    with sqlite3.connect(gw_home / "data" / "gatewatch.db") as db:
        servers = [row[0] for row in db.execute("SELECT server FROM sessions")]
    assert servers == ["fs"]
