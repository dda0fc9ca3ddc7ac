"""The pure parts of `gatewatch serve`: tool review, prompt text, audit summary queries."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from proxy.serve import prompts
from proxy.serve.audit_summary import summarize
from proxy.serve.tool_review import parse_tools, review
from proxy.store.schema import connect


def test_parse_tools_accepts_a_tools_list_result_a_list_or_names() -> None:
    tool = {"name": "send", "inputSchema": {"type": "object"}}
    assert parse_tools(json.dumps({"tools": [tool]})) == [tool]
    assert parse_tools(json.dumps([tool, "other"])) == [tool, {"name": "other"}]
    assert parse_tools("read_file\n\nwrite_file\n") == [{"name": "read_file"},
                                                       {"name": "write_file"}]
    assert parse_tools("  ") == []
    with pytest.raises(ValueError, match="tools must be"):
        parse_tools("42")


def _tool(name: str, *params: str, **annotations: bool) -> dict[str, object]:
    return {"name": name, "annotations": annotations,
            "inputSchema": {"type": "object", "properties": {p: {} for p in params}}}


def test_review_flags_sinks_paths_code_and_destructive_tools() -> None:
    found = {f.name: f for f in review([
        _tool("send_message", "channel", "text"),
        _tool("write_file", "path", "content"),
        _tool("run_query", "sql"),
        _tool("delete_entities", "names", destructiveHint=True),
        _tool("list_directory", "path", readOnlyHint=True),
        _tool("post_webhook"),
    ])}
    assert found["send_message"].sinks == ["channel"] and found["send_message"].sends
    assert found["write_file"].paths == ["path"] and found["write_file"].destructive
    assert found["run_query"].code == ["sql"]
    assert found["delete_entities"].destructive
    assert not found["list_directory"].destructive and not found["list_directory"].sends
    # A sending tool without a destination-shaped argument: every argument is a sink.
    assert "treat all as sinks" in found["post_webhook"].notes()[0]


def test_generate_policy_rejects_an_unknown_strictness() -> None:
    with pytest.raises(ValueError, match="standard, strict, paranoid"):
        prompts.generate_policy("x", "lax", "", None)  # type: ignore[arg-type]


def test_generate_policy_starts_from_the_shipped_pack() -> None:
    pack = {"path": "/p/gmail.yaml", "text": "pack: gmail\ntools: {}\n"}
    text = prompts.generate_policy("gmail", "strict", "send_email", pack)
    assert "```yaml\npack: gmail\ntools: {}\n```" in text
    assert "- send_email: may send data out" in text


def test_summary_window_filters_and_limit(tmp_path: Path) -> None:
    db = tmp_path / "gatewatch.db"
    conn = connect(db)
    now = time.time()
    for i, verdict in enumerate(["allow", "block", "deny", "allow", None]):
        conn.execute(
            "INSERT INTO events (ts, session_id, server, direction, kind, tool, verdict) "
            "VALUES (?, 's', ?, 'c2s', 'request', 't', ?)",
            (now - i * 3600, "a" if i % 2 else "b", verdict),
        )
    conn.close()
    two_hours = summarize(db, hours=1.5)
    assert two_hours["by_verdict"] == {"allow": 1, "block": 1}
    everything = summarize(db, limit=2)
    assert everything["total_decisions"] == 4
    assert [r["verdict"] for r in everything["recent"]] == ["allow", "block"]
    assert everything["top_denied_tools"] == [{"server": "a", "tool": "t", "count": 1},
                                              {"server": "b", "tool": "t", "count": 1}]
    assert summarize(db, server="a")["by_verdict"] == {"block": 1, "allow": 1}
    assert summarize(tmp_path / "missing.db")["total_decisions"] == 0


def test_the_policy_format_the_prompt_teaches_is_valid() -> None:
    from proxy.serve.verdicts import verify_policy

    example = prompts.POLICY_FORMAT.split("```yaml\n")[1].split("```")[0]
    example = "\n".join(ln for ln in example.splitlines() if "pack: PACK" not in ln)
    checked = verify_policy(example)
    assert checked["valid"], checked["errors"]
    assert checked["servers"]["SERVER"]["tools"] == ["TOOL"]
