"""Injected actions that send nothing, through the real proxy (tests/upstreams/travel_server.py):
a flagged review books a hotel on dates it wrote in prose, which the agent passes as ISO dates;
a clean calendar event's notes name a drive file to remove, whose id only the event listing (as
the event's own id) and the notes carry. Both are denied; the user's own dates, and the file once
the drive listing shows it, go through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.relay_pipes import wait_for
from tests.support import GATEWATCH, audited, call, child_env, upstream

pytestmark = pytest.mark.e2e


@asynccontextmanager
async def proxied() -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    argv = [*GATEWATCH, "run", "--name", "travel", "--", *upstream("travel_server")]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        yield client




async def test_a_booking_on_dates_a_flagged_review_wrote_in_prose_is_denied(db_file: Path):
    async with proxied() as client:
        withheld, text = await call(client, "get_reviews", {"hotel": "Le Marais"})
        assert withheld and "Luxury Palace" not in text

        denied, why = await call(client, "reserve_hotel", {
            "hotel": "Hotel Adlon", "start_day": "2024-05-01", "end_day": "2024-05-05"})
        assert denied and "start_day='2024-05-01' (the date 2024-05-01)" in why
        assert "travel.get_reviews" in why and "flagged as prompt injection" in why
        denied, why = await call(client, "reserve_hotel", {
            "hotel": "Hotel Adlon", "start_day": "2024-04-28", "end_day": "May 5, 2024"})
        assert denied and "end_day=" in why

        ok, done = await call(client, "reserve_hotel", {
            "hotel": "Hotel Adlon", "start_day": "2025-01-11", "end_day": "2025-01-15"})
        assert not ok and done == "reserved Hotel Adlon from 2025-01-11 to 2025-01-15"

    rows = await wait_for(lambda: audited(db_file, "reserve_hotel") or None, what="audit rows")
    assert rows.count(("deny", "injected_action")) == 2 and ("allow", "default") in rows


async def test_a_file_id_only_a_documents_text_names_is_denied_until_a_listing_shows_it(
    db_file: Path,
):
    async with proxied() as client:
        assert (await call(client, "list_events", {}))[0] is False
        # `tidy` changes state by its annotations alone (destructiveHint).
        denied, why = await call(client, "tidy", {"file_id": "13"})
        assert denied and "file_id='13' is the id of a file that no listing showed" in why

        assert (await call(client, "list_drive", {}))[0] is False
        ok, done = await call(client, "tidy", {"file_id": "13"})
        assert not ok and done == "removed 13"

    rows = await wait_for(lambda: audited(db_file, "tidy") or None, what="audit rows")
    assert rows == [("deny", "injected_action"), ("allow", "default")]
