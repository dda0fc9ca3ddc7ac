"""Real outputs of the npm reference servers (tests/npm/node_modules), for the detector's
false-positive measurement: each server's tools/list and the results of its read-only tools on
this repository (filesystem: listings, trees, file texts; everything: echo, resources, prompts;
memory: a graph it was given). Run through the mcp SDK's client, no proxy in between.

    .venv/bin/python bench/npm_outputs.py      # prints how many texts each server gave
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench.scratch import scratch

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"


def _texts(result: Any) -> list[str]:
    out = [getattr(block, "text", "") for block in getattr(result, "content", [])]
    structured = getattr(result, "structured_content", None)
    if structured:
        out.append(json.dumps(structured, indent=2))
    return [t for t in out if t and len(t) > 40]


async def _session(command: list[str], calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:])
    out: list[str] = []
    async with Client(params, mode="legacy") as client:
        tools = await client.list_tools()
        out.append(json.dumps([t.model_dump(mode="json", exclude_none=True)
                               for t in tools.tools], indent=2))
        for name, args in calls:
            try:
                out += _texts(await client.call_tool(name, args))
            except Exception as exc:  # a tool this version lacks: skip it, say so
                print(f"  {command[0]} {name}: {type(exc).__name__}", file=sys.stderr)
    return out


def _filesystem_calls() -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_allowed_directories", {}),
        ("directory_tree", {"path": str(ROOT / "docs")}),
        ("list_directory", {"path": str(ROOT / "proxy")}),
    ]
    for folder in ("proxy", "docs", "app", "packs/servers"):
        for path in sorted((ROOT / folder).rglob("*")):
            # The detector's own code and page quote attacks on purpose, like a security
            # tool's README.
            if path.suffix in (".py", ".md", ".yaml") and path.is_file() and (
                path.name != "detector.md" and "detector" not in path.parts
            ):
                calls.append(("read_text_file", {"path": str(path)}))
                calls.append(("get_file_info", {"path": str(path)}))
    return calls


def collect(root: Path = ROOT) -> list[str]:
    if not (BIN / "mcp-server-filesystem").exists():
        return []
    memory = scratch("gw-npm-memory-") / "memory.jsonl"

    async def run() -> list[str]:
        out = await _session([str(BIN / "mcp-server-filesystem"), str(root)],
                             _filesystem_calls())
        out += await _session([str(BIN / "mcp-server-everything")], [
            ("echo", {"message": "The build finished; see the report for details."}),
            ("get-sum", {"a": 2, "b": 3}),
            ("get-env", {}),
        ])
        memory.parent.mkdir(parents=True, exist_ok=True)
        entity = {"type": "entity", "name": "Gatewatch", "entityType": "project",
                  "observations": ["a local security gateway for MCP servers"]}
        memory.write_text(json.dumps(entity) + "\n")
        import os

        os.environ["MEMORY_FILE_PATH"] = str(memory)
        out += await _session([str(BIN / "mcp-server-memory")], [
            ("read_graph", {}), ("search_nodes", {"query": "gateway"})])
        return out

    return list(dict.fromkeys(asyncio.run(run())))


if __name__ == "__main__":
    texts = collect()
    print(f"{len(texts)} texts, {sum(map(len, texts))} characters")
