"""The elicitation form and what counts as an approval."""

from __future__ import annotations

from typing import Any

import pytest

from proxy.ask.form import elicitation_params, read_answer
from proxy.ask.request import AskRequest
from proxy.decision import Decision

REQ = AskRequest(
    tool="send_email",
    arguments={"to": "new@random.com", "api_key": "sk-proj-abcdefghijklmnopqrstuvwx"},
    decision=Decision("ask", "sink_gate",
                      "destination to='new@random.com' is not a trusted recipient",
                      destination="new@random.com"),
)
NO_DEST = AskRequest("search", {}, Decision("ask", "pinning", "tool description changed"))


def test_form_has_a_required_boolean_and_a_remember_choice() -> None:
    params = elicitation_params("gmail", REQ)
    schema = params["requestedSchema"]
    assert params["mode"] == "form"
    assert schema["required"] == ["allow"]
    assert schema["properties"]["allow"]["type"] == "boolean"
    assert schema["properties"]["remember"]["enum"] == ["once", "session", "forever"]
    assert "new@random.com" in params["message"] and "gmail" in params["message"]
    assert "sk-proj" not in params["message"]  # secrets never reach the form


def test_without_destination_nothing_is_offered_for_good() -> None:
    enum = elicitation_params("x", NO_DEST)["requestedSchema"]["properties"]["remember"]["enum"]
    assert enum == ["once", "session"]


@pytest.mark.parametrize(
    ("result", "allow", "remember"),
    [
        ({"action": "accept", "content": {"allow": True, "remember": "forever"}}, True, "forever"),
        ({"action": "accept", "content": {"allow": True}}, True, "once"),
        ({"action": "accept", "content": {"allow": False, "remember": "forever"}}, False, None),
        ({"action": "accept", "content": {}}, False, None),  # empty accept
        ({"action": "accept"}, False, None),  # contentless accept
        ({"action": "accept", "content": {"allow": "true"}}, False, None),
        ({"action": "accept", "content": {"allow": 1}}, False, None),
        ({"action": "accept", "content": {"allow": True, "remember": "always"}}, False, None),
        ({"action": "decline"}, False, None),
        ({"action": "cancel"}, False, None),
        ({"action": "maybe"}, False, None),
        ({}, False, None),
        (None, False, None),
        ("accept", False, None),
    ],
)
def test_only_an_explicit_allow_approves(result: Any, allow: bool, remember: str | None) -> None:
    answer = read_answer(result, REQ)
    assert (answer.allow, answer.remember) == (allow, remember)


def test_forever_is_refused_without_a_destination() -> None:
    answer = read_answer({"action": "accept", "content": {"allow": True, "remember": "forever"}},
                         NO_DEST)
    assert not answer.allow
