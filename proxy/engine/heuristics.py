"""The bottom policy layer: what a tool's own schema and MCP annotations suggest.

Used for every tool no pack names. Conservative: destination-shaped parameters make a tool a
sink, destructive verbs get a call budget, and only a tool the server declares read-only and
closed-world is spared the sink gate.
"""

from __future__ import annotations

import re
from typing import Any

# Parameter names that carry a destination (matched on the name split at _ - . and case).
SINK_WORDS = frozenset(
    [
        "to",
        "cc",
        "bcc",
        "recipient",
        "recipients",
        "recipient_email",
        "receiver",
        "receivers",
        "email",
        "emails",
        "email_address",
        "address",
        "addresses",
        "url",
        "urls",
        "uri",
        "endpoint",
        "webhook",
        "webhook_url",
        "callback",
        "callback_url",
        "channel",
        "channel_id",
        "channel_name",
        "channels",
        "phone",
        "phone_number",
        "number",
        "iban",
        "account_number",
        "share_with",
        "shared_with",
        "invitee",
        "invitees",
        "attendee",
        "attendees",
        "participant",
        "participants",
        "user_email",
        "target_url",
        "destination_url",
        "forward",
        "forward_to",
        "reply_to",
        "dest",
        "host",
        "hostname",
        "domain",
    ]
)
_SINK_SUFFIXES = (
    "_email",
    "_emails",
    "_url",
    "_urls",
    "_uri",
    "_webhook",
    "_recipients",
    "_recipient",
    "_phone",
    "_channel",
    "_address",
)
_DESTRUCTIVE = re.compile(
    r"(^|[_\-.]|(?<=[a-z])(?=[A-Z]))(delete|remove|drop|destroy|purge|"
    r"truncate|wipe|erase|rm|unlink|revoke)",
    re.IGNORECASE,
)
_SENDING = re.compile(
    r"(send|post|share|upload|forward|publish|invite|transfer|notify|reply|"
    r"email|message|tweet|comment|webhook|submit)",
    re.IGNORECASE,
)

# A reader names what it reads (a channel, a recipient's mailbox); only a URL it fetches leaks.
_READ_VERB = re.compile(
    r"^(get|list|read|search|find|show|describe|count|query|view|open|"
    r"lookup|check)([_\-.]|(?<=[a-z])(?=[A-Z])|$)",
    re.IGNORECASE,
)
_URLISH = ("url", "urls", "uri", "endpoint", "webhook", "callback", "host", "hostname", "domain")

DESTRUCTIVE_BUDGET = 10  # per session, for tools whose name says they delete
ANNOTATED_DESTRUCTIVE_BUDGET = 50  # destructiveHint alone: a looser net


def is_sink_name(param: str) -> bool:
    low = param.casefold()
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", param).casefold().replace("-", "_")
    return low in SINK_WORDS or snake in SINK_WORDS or snake.endswith(_SINK_SUFFIXES)


def tool_entry(tool: dict[str, Any]) -> dict[str, Any]:
    """A policy entry (same fields as a pack entry) guessed from one tools/list item."""
    name = str(tool.get("name", ""))
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    params = [str(p) for p in props] if isinstance(props, dict) else []
    raw_hints = tool.get("annotations")
    hints: dict[str, Any] = raw_hints if isinstance(raw_hints, dict) else {}
    read_only = hints.get("readOnlyHint") is True
    open_world = hints.get("openWorldHint")  # spec default when absent: open world
    destructive = hints.get("destructiveHint") is True and not read_only

    entry: dict[str, Any] = {}
    sinks = tuple(p for p in params if is_sink_name(p))
    reader = bool(_READ_VERB.match(name))
    if reader:
        sinks = tuple(p for p in sinks if _is_urlish(p))
    closed_reader = read_only and open_world is False
    sending = bool(_SENDING.search(name)) and not reader and open_world is not False
    if not closed_reader and (sinks or sending):
        entry["exfiltrating"] = True
        entry["sink_params"] = sinks  # empty → the engine sweeps every argument
    if _DESTRUCTIVE.search(name):
        entry["max_calls"] = DESTRUCTIVE_BUDGET
    elif destructive:
        entry["max_calls"] = ANNOTATED_DESTRUCTIVE_BUDGET
    return entry


def _is_urlish(param: str) -> bool:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", param).casefold().replace("-", "_")
    return snake in _URLISH or snake.endswith(("_url", "_urls", "_uri", "_webhook"))
