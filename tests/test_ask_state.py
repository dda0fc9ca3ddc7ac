"""The sealed requestState of the 2026-07-28 era: only a genuine, fresh, unused one opens."""

from __future__ import annotations

import base64

import pytest

from proxy.ask.state import InvalidState, StateExpired, StateSealer

ARGS = {"to": "new@random.com", "subject": "Hi", "body": "hello"}


def test_a_genuine_state_opens_once() -> None:
    sealer = StateSealer()
    token = sealer.seal("send_email", ARGS, ttl=60)
    sealer.open(token, "send_email", dict(reversed(list(ARGS.items()))))  # key order is irrelevant
    with pytest.raises(InvalidState, match="already used"):
        sealer.open(token, "send_email", ARGS)


def test_expired() -> None:
    sealer = StateSealer()
    token = sealer.seal("send_email", ARGS, ttl=10, now=1000.0)
    with pytest.raises(StateExpired):
        sealer.open(token, "send_email", ARGS, now=1010.5)


def test_wrong_tool_or_arguments() -> None:
    sealer = StateSealer()
    token = sealer.seal("send_email", ARGS, ttl=60)
    with pytest.raises(InvalidState, match="issued for tool 'send_email'"):
        sealer.open(token, "delete_email", ARGS)
    token = sealer.seal("send_email", ARGS, ttl=60)
    with pytest.raises(InvalidState, match="arguments differ"):
        sealer.open(token, "send_email", {**ARGS, "to": "attacker@evil.com"})


def test_a_failed_attempt_uses_the_state_up() -> None:
    sealer = StateSealer()
    token = sealer.seal("send_email", ARGS, ttl=60)
    with pytest.raises(InvalidState):
        sealer.open(token, "send_email", {**ARGS, "to": "attacker@evil.com"})
    with pytest.raises(InvalidState, match="already used"):
        sealer.open(token, "send_email", ARGS)


def test_forged_tampered_or_foreign_states() -> None:
    sealer = StateSealer()
    token = sealer.seal("send_email", ARGS, ttl=60)
    prefix, body, mac = token[:4], *token[4:].split(".")
    payload = base64.urlsafe_b64decode(body + "==").replace(b'"e":', b'"e":9')
    tampered = prefix + base64.urlsafe_b64encode(payload).rstrip(b"=").decode() + "." + mac
    for bad in (
        tampered,
        StateSealer().seal("send_email", ARGS, ttl=60),  # another proxy, or an earlier run
        "gw1.garbage",
        "upstream-state",
        None,
        42,
    ):
        with pytest.raises(InvalidState):
            sealer.open(bad, "send_email", ARGS)
    sealer.open(token, "send_email", ARGS)  # the genuine one still works
