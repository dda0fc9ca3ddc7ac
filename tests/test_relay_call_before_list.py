"""A client that calls a tool before it ever listed the tools works through Gatewatch as it
does directly: the proxy lists the tools itself (its own `gw-` request, never shown to the
client), pins them, then decides the call. Both protocol eras, with the mcp SDK client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.relay_pipes import events, query
from tests.support import npm_server, upstream
from tests.test_relay_sdk import client, proxied

pytestmark = pytest.mark.e2e


def own_listings(db: Path) -> list[dict]:
    return [r for r in events(db) if r["direction"] in ("gw2s", "s2gw")]


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "2026-07-28")])
async def test_sdk_upstream_call_before_list(mode: str, era: str, db_file: Path) -> None:
    async with client(proxied("dual", upstream("sdk_dual_server"), db_file), mode) as c:
        added = await c.call_tool("add", {"a": 2, "b": 40})
        assert not added.is_error and added.structured_content == {"result": 42}
        shouted = await c.call_tool("shout", {"text": "hi"})
        assert shouted.content[0].text == "HI"  # type: ignore[union-attr]
    (session,) = query(db_file, "SELECT era FROM sessions")
    assert session["era"] == era
    own = own_listings(db_file)
    # One listing for both calls, asked with Gatewatch's own id and answered to Gatewatch.
    assert [(r["direction"], r["method"]) for r in own] == [("gw2s", "tools/list"),
                                                          ("s2gw", "tools/list")]
    assert own[0]["rpc_id"].startswith("gw-") and own[0]["rpc_id"] == own[1]["rpc_id"]
    calls = [r for r in events(db_file) if r["direction"] == "c2s" and r["tool"] == "add"]
    assert [r["verdict"] for r in calls] == ["allow"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_everything_server_call_before_list(mode: str, db_file: Path) -> None:
    async with client(proxied("everything", [npm_server("everything")], db_file), mode) as c:
        echoed = await c.call_tool("echo", {"message": "first call, never listed"})
        assert not echoed.is_error
        assert echoed.content[0].text == "Echo: first call, never listed"  # type: ignore[union-attr]
        # A tool the server does not have is still refused, and never reaches the server.
        ghost = await c.call_tool("no-such-tool", {})
        assert ghost.is_error and "[gatewatch blocked]" in ghost.content[0].text  # type: ignore[union-attr]
    rows = events(db_file)
    assert any(r["direction"] == "gw2s" and r["method"] == "tools/list" for r in rows)
    ghost_rows = [r for r in rows if r["tool"] == "no-such-tool"]
    assert {r["direction"] for r in ghost_rows} == {"c2s", "gw2c"}
