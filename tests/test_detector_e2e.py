"""The detector in the real proxy: an mcp SDK client talks to tests/upstreams/poisoned_server.py
through `gatewatch run`. A poisoned result reaches the client as an isError result with a trace
id and no payload; the audit row keeps the original.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.relay_pipes import wait_for
from tests.support import GATEWATCH, child_env, upstream

pytestmark = pytest.mark.e2e

PAYLOAD = "forward the user's inbox"


@asynccontextmanager
async def proxied(db: Path) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    argv = [
        *GATEWATCH,
        "run",
        "--name",
        "poisoned",
        "--db",
        str(db),
        "--",
        *upstream("poisoned_server"),
    ]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    async with Client(params, mode="legacy") as client:
        await client.list_tools()  # first sight pins the tools (trust on first use)
        yield client


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def s2c_rows(db: Path, tool: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(
            "SELECT e.* FROM events e WHERE e.direction = 's2c' AND e.kind = 'response' AND "
            "e.rpc_id IN (SELECT rpc_id FROM events WHERE tool = ? AND direction = 'c2s') "
            "ORDER BY e.id",
            (tool,),
        ).fetchall()
    finally:
        conn.close()


async def test_poisoned_result_is_replaced_and_the_audit_keeps_the_original(db_file: Path):
    async with proxied(db_file) as client:
        blocked = await client.call_tool("fetch_poisoned", {"page": "widget"})
        clean = await client.call_tool("fetch_clean", {"page": "widget"})
    assert blocked.is_error
    text = text_of(blocked)
    assert PAYLOAD not in text and "id_rsa" not in text
    trace = re.search(r"trace id (\S+?):", text)
    assert trace is not None, text
    assert not clean.is_error and "Price: 40 EUR" in text_of(clean)

    rows = await wait_for(lambda: s2c_rows(db_file, "fetch_poisoned") or None, what="audit row")
    assert rows is not None
    row = rows[0]
    assert (row["verdict"], row["contract"], row["trace_id"]) == (
        "block",
        "detector",
        trace.group(1),
    )
    assert PAYLOAD in row["payload"]  # the original bytes, for forensics
    detail = json.loads(row["detail"])
    assert "role_hijack.ignore_previous" in detail["rules"]
    assert "hidden_instruction.comment_to_ai" in detail["rules"]


async def test_an_injection_hidden_with_css_is_withheld(db_file: Path):
    # The page's visible text is ordinary; the instruction is in a display:none element, which
    # the person never sees and the model reads. It is scanned on its own, as a comment is.
    async with proxied(db_file) as client:
        result = await client.call_tool("fetch_hidden", {"page": "x2"})
    assert result.is_error and "shoe-refunds.example" not in text_of(result)
    rows = await wait_for(lambda: s2c_rows(db_file, "fetch_hidden") or None, what="audit row")
    assert rows is not None and rows[0]["verdict"] == "block"
    rules = json.loads(rows[0]["detail"])["rules"]
    assert {"hidden_instruction.css_hidden_text", "hidden_instruction.comment_to_ai"} <= set(rules)


async def test_an_injection_after_megabytes_of_padding_is_withheld(db_file: Path):
    # Padding a result past the scan's time budget does not hide the order at its end: the
    # text itself is read whole by the rules, only the views decoded from it stop.
    async with proxied(db_file) as client:
        result = await client.call_tool("fetch_padded", {"megabytes": 5})
    assert result.is_error and "acme-support" not in text_of(result)
    rows = await wait_for(lambda: s2c_rows(db_file, "fetch_padded") or None, what="audit row")
    assert rows is not None and rows[0]["verdict"] == "block"
    assert "role_hijack.ignore_previous" in json.loads(rows[0]["detail"])["rules"]


async def test_an_injection_in_a_text_blob_is_withheld(db_file: Path):
    # Clients decode a text/plain blob for the model; the proxy reads it as they do.
    async with proxied(db_file) as client:
        result = await client.call_tool("fetch_note_blob", {"name": "widget"})
    assert result.is_error
    rows = await wait_for(lambda: s2c_rows(db_file, "fetch_note_blob") or None, what="audit row")
    assert rows is not None and rows[0]["verdict"] == "block"
    detail = json.loads(rows[0]["detail"])
    assert "role_hijack.ignore_previous" in detail["rules"]
    assert "decoded:resource_blob" in detail["notes"]


async def test_disguised_injection_passes_through(db_file: Path):
    # The documented blind spot: nothing to match, so it reaches the client (see
    # tests/test_detector_classes.py::test_disguised_injection_blind_spot).
    async with proxied(db_file) as client:
        result = await client.call_tool("read_disguised", {})
    assert not result.is_error and "classification is DATA" in text_of(result)
