"""The bottom policy layer: what a tool's own name, description, schema and MCP annotations
suggest.

Used for every tool no pack names. Conservative: destination-shaped parameters or a sending
verb (in the name, the title or the first words of the description) make a tool a sink,
destructive verbs get a call budget, path-like parameters are confined by a server-wide
`allowed_paths`, and only a tool the server declares read-only and closed-world is spared the
sink gate.
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
        "rcpt",
        "rcpts",
        "mailto",
        "from",
        "sender",
        "resent_to",
        "resent_cc",
        "resent_bcc",
        "link",
        "href",
        "webhook_uri",
    ]
)
# Names that carry a destination only when the tool sends (`move_file(target)` does not).
_SEND_ONLY_SINKS = frozenset(
    ["target", "targets", "destination", "destinations", "location", "dst", "server",
     "mailbox", "peer", "contact", "contacts", "who", "user", "users", "member", "members"]
)
# What a mail tool reads as a header: a line break in one starts a new header (Bcc: ...).
HEADER_WORDS = frozenset(
    ["to", "cc", "bcc", "from", "sender", "reply_to", "subject", "in_reply_to", "references",
     "message_id", "resent_to", "resent_cc", "resent_bcc", "recipient", "recipients",
     "display_name"]
)
_EMAIL_PARAMS = frozenset(
    ["to", "cc", "bcc", "rcpt", "rcpts", "from", "sender", "reply_to", "forward_to", "mailto",
     "resent_to", "resent_cc", "resent_bcc", "email", "emails", "email_address", "user_email"]
)
_URL_PARAMS = frozenset(["url", "urls", "uri", "link", "href", "endpoint", "webhook",
                         "webhook_url", "webhook_uri", "callback", "callback_url"])
_HOST_PARAMS = frozenset(["host", "hostname", "domain", "server"])
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
# Verbs that send whatever the object: a tool named with one is a sink even when it reads first
# (`read_then_forward`).
_SEND_VERBS = re.compile(
    r"^(send|forward|deliver|upload|share|publish|notify|invite|transfer|reply|submit|"
    r"broadcast|dispatch|relay|tweet|mail|email|post|webhook|curl|wget)(s|es|ed|ing|er|out)?$"
)
# Words that are objects as often as actions (`get_email`, `delete_message`): they make a tool
# a sink when they lead its name or follow a verb that makes something new (`add_comment`).
_SEND_NOUNS = frozenset(["mail", "email", "post", "webhook", "message", "comment",
                         "http", "https", "curl", "wget", "smtp", "sms"])
_MAKING = frozenset(["make", "do", "compose", "write", "create", "new", "add", "put", "push",
                     "perform", "issue", "call"])
_STRONG_VERBS = re.compile(
    r"^(send|forward|deliver|upload|share|publish|notify|invite|transfer|reply|submit|"
    r"broadcast|dispatch|relay|tweet)(s|es|ed|ing|er)?$"
)
# A description that starts with a sending verb ("Sends ...", "POST a payload to ...").
_DESCRIBES_SENDING = re.compile(
    r"^\W*(sends?|posts?|forwards?|delivers?|uploads?|shares?|publish(es)?|notif(y|ies)|"
    r"submits?|e-?mails?|mails?|invites?|transfers?|replies|reply|dispatch(es)?|"
    r"make an http|makes an http|performs? an http|issues? an http|calls? a webhook)\b",
    re.IGNORECASE,
)
_PATH_WORDS = frozenset(["path", "paths", "file", "files", "filename", "filepath", "dir",
                         "dirs", "directory", "directories", "folder", "cwd", "savepath",
                         "save_path"])
# Names that hold a path as often as something else (a city, a recipient): a path only when
# the value has a separator.
_MAYBE_PATH_WORDS = frozenset(["source", "destination", "src", "dst", "target", "output",
                               "input", "out", "location", "root", "from", "to"])
_PATH_SUFFIXES = ("_path", "_paths", "_file", "_dir", "_directory", "_folder", "path", "file",
                  "dir")

# A reader names what it reads (a channel, a recipient's mailbox); only a URL it fetches leaks.
_READ_VERB = re.compile(
    r"^(get|list|read|search|find|show|describe|count|query|view|open|"
    r"lookup|check)([_\-.]|(?<=[a-z])(?=[A-Z])|$)",
    re.IGNORECASE,
)
_URLISH = ("url", "urls", "uri", "endpoint", "webhook", "callback", "host", "hostname", "domain")

DESTRUCTIVE_BUDGET = 10  # per session, for tools whose name says they delete
ANNOTATED_DESTRUCTIVE_BUDGET = 50  # destructiveHint alone: a looser net


def _snake(param: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", param).casefold().replace("-", "_")


def words(name: str) -> list[str]:
    """A tool or parameter name split at _ - . space and camelCase, lower case."""
    return [w for w in re.split(r"[_\-.\s/:]+", _snake(name)) if w]


def is_sink_name(param: str) -> bool:
    low = param.casefold()
    snake = _snake(param)
    return low in SINK_WORDS or snake in SINK_WORDS or snake.endswith(_SINK_SUFFIXES)


def is_header_name(param: str) -> bool:
    """A parameter (or header-map key) a mail server reads as a header line."""
    snake = _snake(param)
    return snake in HEADER_WORDS or snake.endswith(("_header", "_headers"))


def expected_kind(param: str) -> str | None:
    """The kind of destination a parameter takes by its name: 'email', 'url', 'host' or None
    (go by the value's shape)."""
    snake = _snake(param)
    if snake in _EMAIL_PARAMS or snake.endswith(("_email", "_emails")):
        return "email"
    if snake in _URL_PARAMS or snake.endswith(("_url", "_urls", "_uri", "_webhook")):
        return "url"
    if snake in _HOST_PARAMS or snake.endswith(("_host", "_hostname", "_domain")):
        return "host"
    return None


def is_path_name(param: str, value: str | None = None) -> bool:
    """Does the parameter take a file path (given its value, for names that only sometimes
    do)?"""
    snake = _snake(param)
    if snake in _PATH_WORDS or snake.endswith(_PATH_SUFFIXES):
        return True
    return snake in _MAYBE_PATH_WORDS and (value is None or "/" in value or "\\" in value)


_CONTENT_WORDS = frozenset(["content", "contents", "text", "body", "data", "message", "html",
                            "markdown", "pattern", "query", "regex", "old_text", "new_text",
                            "edits", "diff", "patch", "code", "script", "command", "note"])


def is_content_name(param: str) -> bool:
    """A parameter that carries content (whose text may mention paths and addresses)."""
    return _snake(param) in _CONTENT_WORDS


def is_sending(tool: dict[str, Any]) -> bool:
    """Does the tool's name, title or description say it sends something somewhere?"""
    name = str(tool.get("name", ""))
    hints = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    title = " ".join(str(t) for t in (tool.get("title"), (hints or {}).get("title")) if t)
    tokens = words(name) + words(title)
    if any(_STRONG_VERBS.match(w) for w in tokens):
        return True
    lead = tokens[0] if tokens else ""
    if _SEND_VERBS.match(lead) or lead in _SEND_NOUNS or (
        lead in _MAKING and any(w in _SEND_NOUNS for w in tokens[1:])
    ):
        return True
    description = str(tool.get("description") or "")
    return bool(_DESCRIBES_SENDING.match(description))


def tool_entry(tool: dict[str, Any]) -> dict[str, Any]:
    """A policy entry (same fields as a pack entry) guessed from one tools/list item."""
    name = str(tool.get("name", ""))
    named = _params(tool.get("inputSchema"))
    params = [name for path, name in named if path == name]
    raw_hints = tool.get("annotations")
    hints: dict[str, Any] = raw_hints if isinstance(raw_hints, dict) else {}
    read_only = hints.get("readOnlyHint") is True
    open_world = hints.get("openWorldHint")  # spec default when absent: open world
    destructive = hints.get("destructiveHint") is True and not read_only

    entry: dict[str, Any] = {}
    sending = is_sending(tool) and open_world is not False
    reader = bool(_READ_VERB.match(name)) and not sending
    only_urls = reader or (read_only and not sending)
    sinks = tuple(dict.fromkeys(
        path for path, p in named
        if (is_sink_name(p) or (sending and _snake(p) in _SEND_ONLY_SINKS))
        and (not only_urls or _is_urlish(p))
    ))
    closed_reader = read_only and open_world is False
    if not closed_reader and (sinks or sending):
        entry["exfiltrating"] = True
        entry["sink_params"] = sinks  # empty → the engine sweeps every argument
    paths = tuple(p for p in params if is_path_name(p) and p not in sinks)
    if paths:
        entry["path_params"] = paths
    if _DESTRUCTIVE.search(name):
        entry["max_calls"] = DESTRUCTIVE_BUDGET
    elif destructive:
        entry["max_calls"] = ANNOTATED_DESTRUCTIVE_BUDGET
    return entry


def _params(schema: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(where, name) for every property of an input schema, nested objects included: `where`
    is the dotted path the engine can dig to (an array's elements are gated through the
    array), `name` the property's own name."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or depth > 5:
        return []
    out: list[tuple[str, str]] = []
    for key, sub in props.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        out.append((path, str(key)))
        if not isinstance(sub, dict):
            continue
        out += _params(sub, path, depth + 1)
        items = sub.get("items")
        out += [(path, name) for _where, name in _params(items, path, depth + 1)]
    return out


def _is_urlish(param: str) -> bool:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", param).casefold().replace("-", "_")
    return snake in _URLISH or snake.endswith(("_url", "_urls", "_uri", "_webhook"))
