"""The trust table: add, find, list, revoke, expire; and `gatewatch trust` on a real database."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from proxy.ask.trust import parse_duration
from proxy.store.schema import connect
from proxy.store.trust import TrustStore
from tests.support import GATEWATCH, child_env


@pytest.fixture
def store(db_file: Path) -> TrustStore:
    return TrustStore(connect(db_file))


def test_grant_is_scoped_to_server_tool_and_destination(store: TrustStore) -> None:
    gid = store.add("gmail", "send_email", "  Alice@Example.COM ")
    assert store.find("gmail", "send_email", "alice@example.com").id == gid  # type: ignore[union-attr]
    assert store.find("gmail", "send_email", "mailto:ALICE@example.com") is not None
    assert store.find("gmail", "forward_email", "alice@example.com") is None
    assert store.find("outlook", "send_email", "alice@example.com") is None
    assert store.find("gmail", "send_email", "bob@example.com") is None


def test_expiry_and_revocation(store: TrustStore) -> None:
    now = 1_000_000.0
    short = store.add("gmail", "send_email", "a@x.org", expires_at=now + 60, now=now)
    assert store.find("gmail", "send_email", "a@x.org", now=now + 59) is not None
    assert store.find("gmail", "send_email", "a@x.org", now=now + 61) is None
    assert [g.id for g in store.list(now=now + 61)] == []
    assert [g.id for g in store.list(include_inactive=True, now=now + 61)] == [short]

    gid = store.add("gmail", "send_email", "b@x.org")
    assert store.revoke(gid)
    assert not store.revoke(gid)
    assert store.find("gmail", "send_email", "b@x.org") is None


def test_parse_duration() -> None:
    assert parse_duration("24h") == 86400
    assert parse_duration("90s") == 90
    assert parse_duration("7d") == 7 * 86400
    for bad in ("", "24", "h", "-1h", "0m", "1y"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)


def gw(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GATEWATCH, "trust", *args], capture_output=True, text=True,
                          env=child_env(), timeout=60)


def test_cli_add_list_revoke(db_file: Path) -> None:
    added = gw("add", "--server", "gmail", "--tool", "send_email", "--destination",
               "Bob@Corp.com", "--expires", "24h")
    assert added.returncode == 0, added.stderr
    gid = int(added.stdout.split("#")[1])
    row = connect(db_file).execute("SELECT destination, expires_at FROM trust WHERE id = ?",
                                   (gid,)).fetchone()
    assert row["destination"] == "bob@corp.com"
    assert 86000 < row["expires_at"] - time.time() <= 86400

    listed = gw("list")
    assert "bob@corp.com" in listed.stdout and "active" in listed.stdout

    assert gw("revoke", str(gid)).returncode == 0
    assert "bob@corp.com" not in gw("list").stdout
    assert "revoked" in gw("list", "--all").stdout
    again = gw("revoke", str(gid))
    assert again.returncode == 1 and f"no active grant #{gid}" in again.stderr


def test_cli_rejects_a_bad_duration() -> None:
    bad = gw("add", "--server", "s", "--tool", "t", "--destination", "d", "--expires", "soon")
    assert bad.returncode == 2 and "not a duration" in bad.stderr
