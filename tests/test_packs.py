"""Server packs: all load, say where their schemas came from, and match the real servers."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from proxy.engine import PolicyError
from proxy.engine.packs import choose_pack, load_packs
from proxy.engine.policy import load_pack
from tests.support import child_env, npm_server

REQUIRED = {"filesystem", "memory", "everything", "github", "gitlab", "git", "gmail", "slack",
            "gdrive", "fetch", "brave-search", "browser", "postgres", "sqlite"}


def test_every_required_pack_loads_and_names_its_source():
    packs = {p.name: p for p in load_packs()}
    assert set(packs) >= REQUIRED
    for pack in packs.values():
        assert pack.tools, pack.name
        assert pack.source.startswith(("Real tools/list", "Documentation")), pack.name


def test_packs_are_chosen_by_the_names_people_give_servers():
    packs = load_packs()
    for server, expected in [("filesystem", "filesystem"), ("fs", "filesystem"),
                             ("github", "github"), ("playwright", "browser"),
                             ("server-puppeteer", "browser"), ("gmail-work", "gmail")]:
        chosen = choose_pack(packs, server)
        assert chosen is not None and chosen.name == expected, server
    assert choose_pack(packs, "weather") is None


def test_a_malformed_pack_is_an_error_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("pack: bad\nsource: Documentation\ntools:\n  x: {sink_params: [to], oops: 1}\n")
    with pytest.raises(PolicyError) as info:
        load_pack(path)
    assert (info.value.path, info.value.line) == (path, 4)
    path.write_text("pack: nosource\ntools: {x: {}}\n")
    with pytest.raises(PolicyError, match="where its tool schemas came from"):
        load_pack(path)


async def _list_tools(command: str, args: list[str]) -> set[str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=child_env())
    async with Client(params, mode="legacy") as client:
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["filesystem", "memory", "everything"])
async def test_npm_packs_match_the_real_tools_list(name):
    args = [tempfile.gettempdir()] if name == "filesystem" else []
    listed = await _list_tools(npm_server(name), args)
    packs = load_packs()
    pack = next(p for p in packs if p.name == name)
    assert listed == set(pack.tools)
    assert choose_pack(packs, "unnamed-server", listed) is pack


def test_pack_files_are_valid_yaml_in_the_repo_tree():
    root = Path(__file__).resolve().parent.parent / "packs" / "servers"
    assert sorted(p.stem for p in root.glob("*.yaml")) == sorted(REQUIRED)
