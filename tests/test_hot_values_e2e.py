"""Injected actions through the real proxy: a drive's shared document (tests/upstreams/
drive_server.py) tells the agent to delete another file and change the password. The detector
withholds that result; the values it named are hot, so the state-changing calls that use them
are denied, by this proxy and by another proxy sharing the database. A file the user listed
before is still deleted."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.relay_pipes import wait_for
from tests.support import GATEWATCH, audited, call, child_env, upstream

pytestmark = pytest.mark.e2e


@asynccontextmanager
async def proxied(name: str) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    argv = [*GATEWATCH, "run", "--name", name, "--", *upstream("drive_server")]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        yield client



def hot_rows(db: Path) -> list[tuple[str, str]] | None:
    if not db.exists():
        return None
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT server, verdict FROM hot_results").fetchall()
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()
    return rows or None



async def test_values_from_a_flagged_result_cannot_drive_state_changing_calls(db_file: Path):
    async with proxied("drive") as client, proxied("drive-mirror") as mirror:
        assert (await call(client, "list_files", {}))[0] is False
        withheld, text = await call(client, "read_file", {"file_id": "12"})
        assert withheld and "withheld" in text and "hunter22" not in text

        denied, why = await call(client, "delete_file", {"file_id": "13"})
        assert denied and "file_id='13'" in why and "flagged as prompt injection" in why
        denied, why = await call(client, "change_password", {"password": "hunter22"})
        assert denied and "drive.read_file" in why

        # A file the user saw in the clean listing, never named by the injection: deleted.
        ok, done = await call(client, "delete_file", {"file_id": "11"})
        assert not ok and done == "deleted 11"

        # Another wrapped server sharing the database knows the hot values too.
        assert await wait_for(lambda: hot_rows(db_file), what="shared hot result")
        denied, why = await call(mirror, "delete_file", {"file_id": "13"})
        assert denied and "came from a result of drive.read_file" in why

    rows = await wait_for(lambda: audited(db_file, "delete_file") or None, what="audit rows")
    assert ("deny", "injected_action") in rows and ("allow", "default") in rows
