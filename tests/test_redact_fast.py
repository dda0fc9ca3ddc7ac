"""The audit row's redaction memo (session 10) against the old redaction
(tests/reference_redact.py): short texts (a reason, a detail's JSON) answered from a memo. Same
stored text, byte for byte, on payloads, hostile keys and generated values."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.payloads import KINDS, payload
from proxy.audit import PAYLOAD_LIMIT, AuditEvent, row_text
from proxy.redact import MEMO_LONGEST, redact_json, redact_text
from tests.reference_redact import reference_redact_json, reference_redact_text, reference_row_text

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"

# Keys that are token-like however they are written: cases, non-ASCII letters the regex folds,
# escapes JSON writes, a quote or a backslash inside the key.
HOSTILE_KEYS = [
    "password",
    "PASSWORD",
    "Pass",
    "paſſword",
    "ſecret",
    "toKen",
    "api\u212aey",
    "apı_key",
    "AUTHORİZATION",
    "pass\n",
    'x"password',
    "pass\\",
    '\\"token',
    "my\x00secret",
    "session-id",
    "PaT",
    'cookie"',
    "credential\t",
    "private_key",
    "access-key",
    "auth",
    "tokenizer",
    "max_tokens",
    "token_type",
    "github_pat",
    "\u017fession_key",
]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_hostile_keys(key: str) -> None:
    value = {"jsonrpc": "2.0", "params": {key: f"value {GH}", "nested": [{key: 12345}]}}
    for limit in (40, 200, PAYLOAD_LIMIT):
        assert redact_json(value, limit) == reference_redact_json(value, limit)


def test_a_value_full_of_key_words_is_still_plain_or_shaped_the_same() -> None:
    prose = "pass the token to the api; patent access " * 40
    value = {"content": [{"type": "text", "text": prose}], "isError": False}
    assert redact_json(value, PAYLOAD_LIMIT) == reference_redact_json(value, PAYLOAD_LIMIT)
    escaped = {"text": '{"password": "hunter2-' + GH + '", "x": "\\"token\\":"}'}
    assert redact_json(escaped, PAYLOAD_LIMIT) == reference_redact_json(escaped, PAYLOAD_LIMIT)


@pytest.mark.parametrize("size", [200, 4096, 65536])
@pytest.mark.parametrize("kind", KINDS)
def test_payload_rows(kind: str, size: int) -> None:
    text = payload(kind, size, 3)
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}},
    }
    result = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }
    for event in (
        AuditEvent(
            "c2s",
            "request",
            method="tools/call",
            size=len(orjson.dumps(request)),
            payload=request,
            verdict="allow",
            contract="default",
            reason="no contract objects",
            decided_by="rules",
            detail={"layers": ["heuristics"]},
        ),
        AuditEvent("s2c", "response", method="tools/call", payload=result),
        AuditEvent("s2c", "response", payload=result, size=10),
        AuditEvent("c2s", "request", payload=orjson.dumps(request)),
    ):
        assert row_text(event) == reference_row_text(event)


def test_short_texts_memo() -> None:
    for text in [
        "no contract objects",
        f"token={GH}",
        f"key {OPENAI}",
        "x" * MEMO_LONGEST,
        "password: hunter2",
        "Bearer abcdefgh12345678",
        "a" * 11,
    ]:
        for _ in range(3):
            assert redact_text(text) == reference_redact_text(text)
            assert redact_text(text, rare=True) == reference_redact_text(text)


_KEY = st.one_of(
    st.sampled_from([*HOSTILE_KEYS, "text", "name", "layers", "params", "id"]), st.text(max_size=12)
)
_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from([GH, OPENAI, "pass the token", "token=abc123def456", '"x":']),
    st.text(max_size=40),
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEY, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, st.sampled_from([20, 64, 300, PAYLOAD_LIMIT]))
def test_generated_values(value: object, limit: int) -> None:
    assert _outcome(redact_json, value, limit) == _outcome(reference_redact_json, value, limit)


def _outcome(fn: Any, *args: Any) -> object:
    try:
        return fn(*args)
    except TypeError as exc:
        return type(exc), str(exc)


def test_a_value_only_its_mask_can_serialise() -> None:
    value = {"password": 2**70, "text": "x"}  # orjson refuses the integer, the mask is a str
    assert redact_json(value, PAYLOAD_LIMIT) == reference_redact_json(value, PAYLOAD_LIMIT)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=MEMO_LONGEST + 20))
def test_generated_short_texts(text: str) -> None:
    assert redact_text(text) == reference_redact_text(text)


# -- runs of candidates -----------------------------------------------------------------------
# A shape that fails at one start inside a run of its characters fails at every later start in
# the run (each needs a digit in, or a dot after, what follows it): those are not tried again.
# "sk-sk-sk-…" was tried from every third character to the run's end: 64 KB took 5.9 s.

_PIECES = ["sk-", "sk-ant-", "eyJ", "abcdefgh", "1", ".", "-", "_", " ", '"', "x", "AKIA",
           "ABCDEFGHIJKLMNOP", "eyJhbGciOi"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_runs_of_candidates_redact_as_before(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert redact_text(text) == reference_redact_text(text)


@pytest.mark.parametrize("end", ["", "1"])
@pytest.mark.parametrize("unit", ["sk-", "eyJ", "sk-ant-", "eyJa.eyJ"])
def test_a_megabyte_of_candidates_is_redacted_in_linear_time(unit: str, end: str) -> None:
    """Quadratic, each of these took hours; the test's timeout is the guard."""
    text = unit * ((1 << 20) // len(unit)) + end
    assert len(redact_text(text)) <= len(text)
