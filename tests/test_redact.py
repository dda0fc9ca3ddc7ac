"""Secrets never reach the audit log: token-like keys, credential-shaped values, command lines."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from proxy.audit import AuditEvent, payload_text, row_text
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


# One realistic value per credential shape the redaction must know, built from pieces so the
# repository itself holds none. Each is masked alone, in prose, in JSON and in escaped JSON.
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RESTRICTED = "rk_live_" + "51H8xYzAbCdEfGhIjKlMnOpQ"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GHO = "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a"
GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"
GITLAB = "glpat-" + "xXxXxXxXxXxXxXxXxXxX"
SLACK_USER = "xoxp-" + "2401234567-2401234567-2401234567-abcdef0123456789abcdef0123456789"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GOOGLE_OAUTH = "ya29." + "a0AfH6SMBx3dk9Q_ZtrwGxpT4yE-2oQnCbx0vcrE"
BASIC_VALUE = "dXNlcjpodW50ZXIy"  # base64 of "user:hunter2"
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

SECRETS = {
    "stripe": STRIPE,
    "stripe restricted": STRIPE_RESTRICTED,
    "aws key id": AWS,
    "aws temporary key id": "ASIA" + "Y34FZKBOKMUTVV7A",
    "github classic": GH,
    "github oauth": GHO,
    "github fine-grained": GH_PAT,
    "gitlab": GITLAB,
    "slack bot": SLACK,
    "slack user": SLACK_USER,
    "npm": NPM,
    "google oauth": GOOGLE_OAUTH,
    "google api key": "AIza" + "SyA-1234567890abcdefghijklmnopqrstu",
    "openai": OPENAI,
    "anthropic": "sk-ant-" + "api03-AbCdEf0123456789xyzXYZ",
    "jwt": JWT,
    "rsa private key": PEM,
    "openssh private key": OPENSSH,
}

# Secrets that only a name or a scheme in front of them tells apart: (text, the secret part).
IN_CONTEXT = {
    "aws secret assignment": (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    "aws secret in json": (f'"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"', AWS_SECRET),
    "aws secret env": (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    "basic auth header": (f"Authorization: Basic {BASIC_VALUE}", BASIC_VALUE),
    "basic auth alone": (f"curl -H 'x: Basic {BASIC_VALUE}'", BASIC_VALUE),
    "bearer": ("Bearer abcdefghij0123456789xyz", "abcdefghij0123456789xyz"),
    "custom authorization scheme": ("authorization: Token tok3n-value-here", "tok3n-value-here"),
    "url userinfo": ("clone https://bob:PASS-w0rd@git.corp.example/x.git", "PASS-w0rd"),
    "database url": ("postgres://admin:s3cr3t!x@db.internal:5432/app", "s3cr3t!x"),
    "url token as user": (f"https://{'a1b2c3d4e5' * 3}@github.com/o/r", "a1b2c3d4e5" * 3),
    "url query token": ("https://api.example/x?access_token=Zq81mmPn02&page=2", "Zq81mmPn02"),
    "presigned url": ("https://b.s3.example/o?X-Amz-Signature=9f86d081884c7d65&x=1",
                      "9f86d081884c7d65"),
    "password colon": ("password: hunter2", "hunter2"),
    "password yaml indented": ("db:\n  password: 'correct horse'\n", "correct horse"),
    "secret equals": ("client_secret=abc123XYZ", "abc123XYZ"),
    "db password env": ("DB_PASSWORD=pa55w0rd", "pa55w0rd"),
    "python assignment": ('API_KEY = "live-key-0099"', "live-key-0099"),
    "json assignment": ('{"passwd": "s3cret-v"}', "s3cret-v"),
    "go assignment": ('secret := "shh-1234"', "shh-1234"),
    "npmrc": ("//registry.example/:_authToken=abcdef-0123-4567", "abcdef-0123-4567"),
    "slack webhook": ("https://hooks.slack.com/services/T0CORP/B0HOOK/xyzTOKEN123",
                      "xyzTOKEN123"),
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_every_credential_shape_is_masked_wherever_it_appears(secret: str) -> None:
    assert REDACTED in redact_text(secret)
    assert secret not in redact_text(f"x {secret} y")
    assert redact_text(f"café — {secret} ü") == f"café — {REDACTED} ü"  # non-ASCII text
    nested = {"params": {"arguments": {"a": [{"b": f"see {secret}."}]}}}
    escaped = {"text": json.dumps({"config": {"value": secret}})}  # JSON inside a string
    result = {"content": [{"type": "text", "text": f"output:\n{secret}\nend"}]}
    for doc in (nested, escaped, result):
        text, cut = payload_text(doc, 16 * 1024)
        assert text is not None and not cut
        assert secret not in text and REDACTED in text
        json.loads(text)  # the stored row is still JSON
        assert not any(part in text for part in _fragments(secret))
    raw, _ = payload_text(f'{{"broken": "{secret}"'.encode(), 16 * 1024)
    assert raw is not None and secret not in raw  # a frame that did not parse
    assert secret not in " ".join(redact_argv(["srv", f"--config={secret}", secret]))


def _fragments(secret: str) -> list[str]:
    """The long inner pieces of a secret (a PEM body line, a JWT part): none may survive."""
    return [p for p in secret.replace("\n", ".").split(".") if len(p) > 12 and "-----" not in p]


@pytest.mark.parametrize(("text", "secret"), list(IN_CONTEXT.values()), ids=list(IN_CONTEXT))
def test_secrets_named_by_their_context(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and REDACTED in out
    stored, _ = payload_text({"arguments": {"cmd": text}}, 16 * 1024)
    assert stored is not None and secret not in stored
    json.loads(stored)
    # The name, scheme or host around the secret stays readable.
    assert out.split(REDACTED)[0] == text.split(secret)[0][: len(out.split(REDACTED)[0])]


def test_quoted_values_inside_escaped_json_keep_the_json_valid() -> None:
    inner = json.dumps({"password": "two words", "user": "bob"})
    text, _ = payload_text({"result": inner}, 16 * 1024)
    assert text is not None and "two words" not in text
    assert json.loads(json.loads(text)["result"]) == {"password": REDACTED, "user": "bob"}


def test_a_private_key_cut_mid_block_leaves_nothing_after_begin() -> None:
    body = "MIIEpAIBAAKCAQEA" * 400
    doc = {"content": [{"type": "text", "text": f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{body}"}]}
    text, _ = payload_text(doc, 2048)
    assert text is not None and "MIIEpAIB" not in text
    assert "key:" in text


def test_reason_and_detail_are_redacted_in_the_row() -> None:
    event = AuditEvent(
        "c2s",
        "request",
        reason="https://bob:PASS-w0rd@evil.example/ is not a trusted destination",
        detail={"destination": f"https://x.example/?token={NPM}", "api_key": "k-1"},
        payload=b"not json " + STRIPE.encode(),
    )
    row = row_text(event)
    assert row.reason is not None and "PASS-w0rd" not in row.reason and "evil.example" in row.reason
    assert row.detail is not None and NPM not in row.detail and "k-1" not in row.detail
    assert row.payload is not None and STRIPE not in row.payload


@pytest.mark.parametrize(
    ("argv", "hidden"),
    [
        (["srv", "--db-url=postgres://admin:pw0rd@db.example/app"], "pw0rd"),
        (["srv", "--db-url", "postgres://admin:pw0rd@db.example/app"], "pw0rd"),
        (["srv", "--password", "hunter2"], "hunter2"),
        (["srv", "--stripe", STRIPE], STRIPE),
        (["env", f"NPM_CONFIG_TOKEN={NPM}", "npx", "srv"], NPM),
        (["srv", "--header", f"Authorization: Bearer {GH}"], GH),
        (["srv", "--auth-header=Basic " + BASIC_VALUE], BASIC_VALUE),
    ],
)
def test_command_lines(argv: list[str], hidden: str) -> None:
    out = redact_argv(argv)
    assert hidden not in " ".join(out)
    assert out[0] == argv[0] and len(out) == len(argv)


# Benign controls: values that look a little like secrets and must survive untouched.
BENIGN = {
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "git sha": "d98eb20c5e7c9b0a6c3a1f2e4d5b6a7980c1d2e3",
    "numeric id": "1234567890123",
    "url with port and path": "https://api.example.com:8443/v1/users/42?page=2&sort=asc",
    "mailto": "mailto:bob@example.com",
    "prose about auth": "Basic usage: pass a bearer authentication header; the secret is care.",
    "sklearn": "pip install sk-learn-extras-for-everyone",
    "author field": '{"author": "Jane Doe", "max_tokens": 1024, "keyboard": "us"}',
    "code": "def key_for(item):\n    key = item.name\n    return cache[key]\n",
    "css": "a:hover { color: #ff0000; } .token { font-weight: bold; }",
    "timestamp": "2026-11-30T10:00:00Z 12345678:00",
}


@pytest.mark.parametrize("text", list(BENIGN.values()), ids=list(BENIGN))
def test_benign_values_survive(text: str) -> None:
    assert redact_text(text) == text
    stored, _ = payload_text({"v": text}, 16 * 1024)
    assert stored is not None and json.loads(stored) == {"v": text}


@pytest.mark.parametrize("key", ["author", "max_tokens", "input_tokens", "tokenizer", "bypass"])
def test_keys_that_only_contain_a_secret_word(key: str) -> None:
    assert not is_secret_key(key)
    assert redact({key: "value 1"}) == {key: "value 1"}


def test_base64_images_are_kept() -> None:
    """A base64 blob (an image in a tool result) is stored unchanged: no shape matches inside
    the base64 alphabet, so a screenshot in the log stays a screenshot."""
    rng = random.Random(7)
    for n in range(20):
        blob = base64.b64encode(rng.randbytes(12_000)).decode()
        image = {"type": "image", "mimeType": "image/png", "data": blob}
        uri = f"data:image/png;base64,{blob}"
        assert redact_text(blob) == blob, n
        assert redact_text(uri) == uri, n
        text, cut = payload_text({"content": [image]}, 64 * 1024)
        assert text is not None and not cut and json.loads(text)["content"][0] == image


@pytest.mark.e2e
async def test_secrets_in_traffic_and_command_stay_out_of_the_database(db_file: Path) -> None:
    db_url = "postgres://admin:" + "Db-pa55word" + "@db.internal/app"
    command = echo_upstream("--api-key", "cmdline-secret-value", f"--db-url={db_url}")
    proxy = await RawProxy.start(db_file, command)
    params = {"api_key": "arg-secret-value", "note": f"use {GH} please"}
    call = {
        "name": "deploy",
        "arguments": {"env": {"vars": [f"STRIPE_KEY={STRIPE}", "MODE=live"]},
                      "notes": json.dumps({"aws": {"secret_access_key": AWS_SECRET}})},
    }
    result = {"content": [{"type": "text", "text": f"connected with password: hunter2\n{NPM}"}]}
    try:
        answer = await proxy.request(1, "echo", params)
        assert answer["result"] == params  # the upstream and client get the real values
        assert (await proxy.request(2, "echo", result))["result"] == result
        await proxy.request(3, "tools/call", call)  # denied or not, its row is written
        await proxy.send_raw(f"not json but has {OPENAI} and Bearer {GOOGLE_OAUTH}\n".encode())
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
    for secret in ("cmdline-secret-value", "Db-pa55word", "arg-secret-value", GH, OPENAI,
                   GOOGLE_OAUTH, STRIPE, AWS_SECRET, "hunter2", NPM):
        assert secret not in dump, secret
    assert "db.internal" in dump  # the command line stays readable
    rows = events(db_file)
    assert len([r for r in rows if r["rpc_id"] == "1"]) == 2  # both directions were audited
    assert any(r["kind"] == "parse_error" and REDACTED in r["payload"] for r in rows)
    call_row = next(r for r in rows if r["rpc_id"] == "3" and r["direction"] == "c2s")
    assert "MODE=live" in call_row["payload"]  # only the secrets are gone
