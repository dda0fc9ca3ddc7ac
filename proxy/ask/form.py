"""The elicitation form Gatewatch puts to the human, and what counts as an answer.

The form has a required boolean `allow` and a choice of how long to remember. Only an accept
whose content carries `allow: true` approves: an empty schema, an accept without content (some
clients auto-accept) or anything malformed is a deny, as are decline and cancel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proxy.ask.preview import arguments_preview
from proxy.ask.request import AskRequest
from proxy.engine.lookalike import shown
from proxy.ipc.protocol import Remember

MESSAGE_LIMIT = 2000

_REMEMBER_TITLES: dict[str, str] = {
    "once": "Only this call",
    "session": "Until this server restarts",
    "forever": "Always (until revoked)",
}


@dataclass(frozen=True)
class Answer:
    allow: bool
    remember: Remember | None
    reason: str


def remember_choices(req: AskRequest) -> list[Remember]:
    # A grant is scoped to a destination, a tool approval to the version shown (its digest);
    # without either there is nothing to store for good.
    lasting = req.destinations or (req.contract == "pinning" and req.detail.get("digest"))
    return ["once", "session", "forever"] if lasting else ["once", "session"]


def elicitation_params(server: str, req: AskRequest) -> dict[str, Any]:
    """`elicitation/create` params (form mode), the same in both protocol eras."""
    choices = remember_choices(req)
    target = f" to {', '.join(req.destinations)}" if req.destinations else ""
    changed = req.detail.get("fields") if req.contract == "pinning" else None
    what = f"Changed: {', '.join(map(str, changed))}\n" if isinstance(changed, list) else ""
    if req.contract == "pinning":
        what += "Approving the tool does not approve where this call sends data: that is " \
                "checked next.\n"
    message = (
        f"Gatewatch: allow {server} to run {shown(req.tool)}{target}?\n"
        f"Why you are asked: {req.reason}\n{what}"
        f"Arguments: {arguments_preview(req.arguments, limit=MESSAGE_LIMIT)}"
    )
    return {
        "mode": "form",
        "message": message[:MESSAGE_LIMIT],
        "requestedSchema": {
            "type": "object",
            "properties": {
                "allow": {
                    "type": "boolean",
                    "title": "Allow this call",
                    "description": "Tick to let the call through; leave unticked to block it.",
                    "default": False,
                },
                "remember": {
                    "type": "string",
                    "title": "Remember my answer",
                    "enum": list(choices),
                    "enumNames": [_REMEMBER_TITLES[c] for c in choices],
                    "default": "once",
                },
            },
            "required": ["allow"],
        },
    }


def read_answer(result: Any, req: AskRequest) -> Answer:
    """Map an elicitation result ({action, content}) to allow/deny and how long to remember."""
    if not isinstance(result, dict):
        return Answer(False, None, "the client's answer was not an object")
    action = result.get("action")
    if action == "decline":
        return Answer(False, None, "the human declined")
    if action == "cancel":
        return Answer(False, None, "the human dismissed the question")
    if action != "accept":
        return Answer(False, None, f"unknown elicitation action {action!r}")
    content = result.get("content")
    if not isinstance(content, dict) or "allow" not in content:
        return Answer(False, None, "accepted without an answer to 'allow' (not an approval)")
    if content["allow"] is not True:
        return Answer(False, None, "the human did not tick 'allow'")
    remember = content.get("remember", "once")
    if remember not in remember_choices(req):
        return Answer(False, None, f"unknown remember choice {remember!r}")
    return Answer(True, remember, "the human allowed it")
