"""Policy files: strict validation with file and line, and how layers merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy.engine import Engine, PolicyError, load_policy
from proxy.engine.policy import merge_tool
from proxy.store.database import Database
from proxy.store.schema import connect

GMAIL_TOOLS: list[dict[str, Any]] = [
    {"name": n, "description": n, "inputSchema": {}}
    for n in ("send_email", "read_email", "search_emails", "delete_email")
]


@pytest.fixture
def db(db_file: Path) -> Database:
    return Database(connect(db_file))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("servers:\n  mail:\n    tools:\n      send: {sink_param: [to]}\n", 4, "unknown field"),
        ("servers:\n  mail:\n    tools:\n      send:\n        arg_patterns: {to: '(['}\n", 5,
         "invalid regex"),
        ("servers:\n  mail:\n    tools:\n      send: {max_calls: -1}\n", 4, "max_calls"),
        ("servers:\n  mail:\n    tools:\n      send: {exfiltrating: yes please}\n", 4,
         "true or false"),
        ("- just\n- a list\n", 1, "mapping"),
        ("servers:\n  mail: [1, 2]\n", 2, "must be a mapping"),
        ("servers: {a: {}\n", 2, "YAML syntax"),
        ("servers:\n  a: {}\n  a: {}\n", 3, "duplicate key"),
        ("allowlist: [read_inbox]\n", 1, "server.tool"),
        ("version: 2\n", 1, "version: 1"),
        ("servers:\n  mail:\n    tools:\n      send: {sink_params: to}\n"
         "      x: {sink_params: [1]}\n", 5, "list of non-empty strings"),
    ],
)
def test_malformed_policy_names_file_line_and_reason(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert info.value.path == path
    assert info.value.line == line
    assert words in info.value.reason
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "nope.yaml")


def test_empty_file_is_an_empty_policy(tmp_path):
    doc = load_policy(write(tmp_path, "# nothing yet\n"))
    assert doc.servers == {} and doc.allowlist is None


def test_engine_refuses_a_malformed_policy(db, tmp_path):
    path = write(tmp_path, "servers:\n  x:\n    tols: {}\n")
    with pytest.raises(PolicyError) as info:
        Engine.create("x", "s", db, policy_path=path)
    assert info.value.line == 3


def test_merge_adds_to_sinks_and_trust_and_overrides_scalars():
    pack = {"exfiltrating": True, "sink_params": ("to", "cc"), "max_calls": 5,
            "trusted_destinations": ("a@x.example",), "arg_patterns": {"to": "p1", "cc": "p2"}}
    user = {"sink_params": ("bcc",), "max_calls": 2, "trusted_destinations": ("b@x.example",),
            "arg_patterns": {"to": "p3"}}
    merged = merge_tool(pack, user)
    assert merged["exfiltrating"] is True
    assert merged["sink_params"] == ("to", "cc", "bcc")
    assert merged["trusted_destinations"] == ("a@x.example", "b@x.example")
    assert merged["max_calls"] == 2
    assert merged["arg_patterns"] == {"to": "p3", "cc": "p2"}
    assert merge_tool(pack, {**user, "replace": True}) == user


def test_user_allowlist_over_a_pack_keeps_the_sink_gate_on(db, tmp_path):
    # The reference tool's documented trap: a user entry that only adds a trusted address
    # replaced the pack entry and silently switched the gate off. Here it merges.
    path = write(tmp_path, "servers:\n  gmail:\n    tools:\n"
                 "      send_email: {trusted_destinations: [boss@corp.example]}\n")
    engine = Engine.create("gmail", "s", db, policy_path=path)
    engine.tools_listed(GMAIL_TOOLS)
    assert engine.pack == "gmail"
    policy = engine.policy_for("send_email")
    assert policy.exfiltrating and set(policy.sink_params) == {"to", "cc", "bcc"}
    assert engine.decide("send_email", {"to": ["boss@corp.example"]}).verdict == "allow"
    assert engine.decide("send_email", {"to": ["boss@corp.example"],
                                        "bcc": ["other@x.example"]}).verdict == "ask"
    assert policy.layers == ("pack:gmail", f"user:{path}")


def test_replace_true_really_replaces(db, tmp_path):
    path = write(tmp_path, "servers:\n  gmail:\n    tools:\n"
                 "      send_email: {replace: true, max_calls: 1}\n")
    engine = Engine.create("gmail", "s", db, policy_path=path)
    engine.tools_listed(GMAIL_TOOLS)
    assert not engine.policy_for("send_email").exfiltrating
    assert engine.decide("send_email", {"to": ["x@y.example"]}).verdict == "allow"
    assert engine.decide("send_email", {"to": ["x@y.example"]}).contract == "budget"


def test_layers_stack_default_file_then_policy_path_then_globs_under_exact(db, tmp_path, gw_home):
    default = gw_home / "config" / "policy.yaml"
    default.parent.mkdir(parents=True)
    default.write_text("trusted_destinations: ['*@home.example']\nservers:\n  '*':\n"
                       "    tools:\n      delete_email: {max_calls: 1}\n")
    path = write(tmp_path, "servers:\n  gmail:\n    tools:\n      delete_email: {max_calls: 3}\n")
    engine = Engine.create("gmail", "s", db, policy_path=path)
    engine.tools_listed(GMAIL_TOOLS)
    assert engine.policy_for("delete_email").max_calls == 3
    assert engine.decide("send_email", {"to": ["me@home.example"]}).verdict == "allow"


def test_user_can_choose_a_pack_for_an_oddly_named_server(db, tmp_path):
    path = write(tmp_path, "servers:\n  work-mailbox:\n    pack: gmail\n")
    engine = Engine.create("work-mailbox", "s", db, policy_path=path)
    assert engine.pack == "gmail"


def test_fingerprint_finds_the_pack_when_the_name_does_not(db):
    engine = Engine.create("my-stuff", "s", db)
    assert engine.pack is None
    engine.tools_listed(GMAIL_TOOLS)
    assert engine.pack == "gmail"


def test_unknown_pack_is_an_error(db, tmp_path):
    path = write(tmp_path, "servers:\n  x:\n    pack: nosuchpack\n")
    with pytest.raises(PolicyError, match="unknown pack"):
        Engine.create("x", "s", db, policy_path=path)
