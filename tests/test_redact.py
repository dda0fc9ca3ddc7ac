"""Secrets never reach the audit log: token-like keys, credential-shaped values, command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy.audit import payload_text
from proxy.redact import REDACTED, is_secret_key, redact, redact_argv, redact_text
from tests.relay_pipes import RawProxy, echo_upstream, events, query

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
SLACK = "xoxb-" + "1234567890"  # the shortest shape there is (15 characters)
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    "key",
    [
        "password",
        "api_key",
        "apiKey",
        "Authorization",
        "GITHUB_TOKEN",
        "client_secret",
        "session_id",
        "private-key",
        "cookie",
        "passphrase",
        "pat",
    ],
)
def test_token_like_keys(key: str) -> None:
    assert is_secret_key(key)
    assert redact({key: "hunter2", "n": 1}) == {key: REDACTED, "n": 1}
    assert redact({key: 12345678}) == {key: REDACTED}


@pytest.mark.parametrize("key", ["path", "query", "name", "content", "url", "patch", "id"])
def test_ordinary_keys_are_kept(key: str) -> None:
    assert not is_secret_key(key)
    assert redact({key: "plain value"}) == {key: "plain value"}


@pytest.mark.parametrize(
    "secret", [GH, OPENAI, AWS, JWT, PEM, "Bearer abcdefghijklmnop0123", SLACK]
)
def test_credential_shaped_values_anywhere(secret: str) -> None:
    doc = {"params": {"arguments": {"body": f"here: {secret} :end", "list": [secret]}}}
    out = json.dumps(redact(doc))
    assert secret not in out
    assert out.count(REDACTED) == 2
    assert "here: " in out and " :end" in out  # only the secret itself is masked
    assert secret not in redact_text(f"x {secret} y")


def test_lists_under_token_like_keys() -> None:
    doc = {"tokens": ["abc", "def"], "api_keys": [{"k": "x1"}], "password": [[1, None]]}
    assert redact(doc) == {
        "tokens": [REDACTED, REDACTED],
        "api_keys": [{"k": REDACTED}],
        "password": [[REDACTED, None]],
    }
    # An object under such a key is still walked key by key (tool schemas stay readable).
    schema = {"properties": {"token": {"type": "string", "description": "your token"}}}
    assert redact(schema) == schema


@pytest.mark.parametrize("secret", [GH, PEM])
def test_secret_straddling_the_cut_leaves_no_fragment(secret: str) -> None:
    for offset in (5, len(secret) // 2, len(secret) - 3):
        text = "a" * (100 - offset) + secret + " tail"
        kept = redact({"body": text}, max_string=100)["body"]
        assert secret[:offset] not in kept, offset
        raw, _ = payload_text(text.encode(), 100)
        assert raw is not None and secret[:offset] not in raw


def test_shortest_secret_alone() -> None:
    assert redact({"v": SLACK}) == {"v": REDACTED}
    assert redact({"v": SLACK[:-1]}) == {"v": SLACK[:-1]}


def test_structure_and_non_strings_survive() -> None:
    doc = {"a": [1, 2.5, True, None, {"b": "c"}], "token": None}
    assert redact(doc) == {"a": [1, 2.5, True, None, {"b": "c"}], "token": None}


def test_long_strings_are_cut_before_scanning() -> None:
    out = redact({"text": "a" * 10_000 + GH}, max_string=100)
    assert out["text"].startswith("a" * 100) and "more chars]" in out["text"]
    assert len(out["text"]) < 200


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["srv", "--token", "abc", "--port", "8"], ["srv", "--token", REDACTED, "--port", "8"]),
        (["srv", "--api-key=abc"], ["srv", f"--api-key={REDACTED}"]),
        (["env", "GITHUB_TOKEN=abc", "srv"], ["env", f"GITHUB_TOKEN={REDACTED}", "srv"]),
        (["srv", GH], ["srv", REDACTED]),
        (["npx", "-y", "@scope/server", "/tmp"], ["npx", "-y", "@scope/server", "/tmp"]),
    ],
)
def test_argv(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv) == expected


@pytest.mark.e2e
async def test_secrets_in_traffic_and_command_stay_out_of_the_database(db_file: Path) -> None:
    command = echo_upstream("--api-key", "cmdline-secret-value")
    proxy = await RawProxy.start(db_file, command)
    params = {"api_key": "arg-secret-value", "note": f"use {GH} please"}
    try:
        answer = await proxy.request(1, "echo", params)
        assert answer["result"] == params  # the upstream and client get the real values
        await proxy.send_raw(f"not json but has {OPENAI}\n".encode())
        await proxy.recv()
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    everything = [
        *query(db_file, "SELECT * FROM sessions"),
        *query(db_file, "SELECT * FROM events"),
    ]
    dump = "\n".join(json.dumps(dict(row)) for row in everything)
    for secret in ("cmdline-secret-value", "arg-secret-value", GH, OPENAI):
        assert secret not in dump
    rows = events(db_file)
    assert len([r for r in rows if r["rpc_id"] == "1"]) == 2  # both directions were audited
    assert any(r["kind"] == "parse_error" and REDACTED in r["payload"] for r in rows)
