"""`gatewatch logs`, `stats` and `version` over an audit log written by real proxy runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support import GATEWATCH, child_env, upstream


def proxy_run(name: str, lines: list[dict]) -> None:
    """One `gatewatch run` session: send the lines, close stdin, let it exit."""
    data = "".join(json.dumps(m) + "\n" for m in lines).encode()
    done = subprocess.run([*GATEWATCH, "run", "--name", name, "--", *upstream("relay_echo")],
                          input=data, capture_output=True, env=child_env(), timeout=60)
    assert done.returncode == 0, done.stderr.decode()


def gw(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GATEWATCH, *args], capture_output=True, text=True,
                          env=child_env(), timeout=60)


def rows(*args: str) -> list[dict]:
    done = gw("logs", "--json", "--tail", "500", *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_logs_filters_and_stats_counts(gw_home: Path) -> None:
    proxy_run("alpha", [
        {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"note": 'say "hi" 100%_done'}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ])
    proxy_run("beta", [{"jsonrpc": "2.0", "id": 7, "method": "ping"}])

    everything = rows()
    assert {r["server"] for r in everything} == {"alpha", "beta"}
    beta = rows("--server", "beta")
    assert beta and {r["server"] for r in beta} == {"beta"}
    assert [r["direction"] for r in beta if r["method"] == "ping"] == ["c2s", "s2c"]
    # Quotes and LIKE wildcards in free text are matched literally, never as SQL.
    quoted = rows("--grep", 'say "hi" 100%_done')
    assert {r["rpc_id"] for r in quoted} == {"1"}
    assert rows("--grep", "100%x") == []
    responses = [r for r in rows("--method", "ping") if r["direction"] == "s2c"]
    assert len(responses) == 2 and all(r["latency_ms"] is not None for r in responses)

    stats = gw("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert report["events"] == len(everything)
    assert report["by_method"]["ping"] == 4  # two requests, two responses
    assert report["by_server"]["alpha"] > report["by_server"]["beta"]
    assert report["latency_ms"]["p50"] is not None

    table = gw("logs", "--server", "alpha")
    assert "→" in table.stdout and "←" in table.stdout  # direction arrows
    assert "\033[" not in table.stdout  # no colour codes when not on a terminal


def test_version_reports_database_and_schema(gw_home: Path) -> None:
    from proxy.store.schema import SCHEMA_VERSION

    before = json.loads(gw("version", "--json").stdout)
    assert before["database_schema"] == "not created yet"
    proxy_run("alpha", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    after = json.loads(gw("version", "--json").stdout)
    assert after["database"] == str(gw_home / "data" / "gatewatch.db")
    assert after["database_schema"] == SCHEMA_VERSION


def test_logs_without_a_database_says_so(gw_home: Path) -> None:
    done = gw("logs")
    assert done.returncode == 0 and "no audit log yet" in done.stderr
