"""A first pass over a server's tool list: which arguments look like sinks, paths or code.

Feeds the review and policy prompts. It is a reading aid for a human or a model, not a decision:
decisions are the engine's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from proxy.errors import InvalidValue

DESTINATION = re.compile(
    r"^(to|cc|bcc|recipients?|emails?|address|url|uri|endpoint|webhook|host|domain|channel|"
    r"chat_id|user(_id)?|phone|number|target|destination|share_with|repo|owner|remote)$",
    re.IGNORECASE,
)
PATH = re.compile(r"(^|_)(path|paths|file|filename|dir|directory|source|destination)$", re.I)
CODE = re.compile(r"^(command|cmd|script|code|query|sql|expression|shell|args)$", re.IGNORECASE)
SEND_VERB = re.compile(r"(send|post|share|upload|publish|forward|reply|invite|push|email|"
                       r"message|webhook|fetch|request|create_issue|comment)", re.IGNORECASE)
DESTRUCTIVE_VERB = re.compile(r"(delete|remove|drop|destroy|truncate|overwrite|write|move|"
                              r"rename|kill|reset)", re.IGNORECASE)


@dataclass
class ToolFindings:
    name: str
    sinks: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    sends: bool = False
    destructive: bool = False

    def notes(self) -> list[str]:
        out = []
        if self.sends or self.sinks:
            where = ", ".join(self.sinks) or "no destination-shaped argument: treat all as sinks"
            out.append(f"may send data out (sink arguments: {where})")
        if self.paths:
            out.append(f"takes paths ({', '.join(self.paths)}): confine them to directories")
        if self.code:
            out.append(f"takes code or commands ({', '.join(self.code)}): scan for payloads")
        if self.destructive:
            out.append("destructive: give it a call budget or ask every time")
        return out


def parse_tools(text: str) -> list[dict[str, Any]]:
    """Tools from a `tools/list` result, a list of tools, or plain tool names one per line."""
    text = text.strip()
    if not text:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return [{"name": line.strip()} for line in text.splitlines() if line.strip()]
    if isinstance(value, dict):
        value = value.get("tools", [value])
    if not isinstance(value, list):
        raise InvalidValue(
            "tools must be a JSON list of tool objects, a tools/list result or names")
    return [t if isinstance(t, dict) else {"name": str(t)} for t in value]


def review(tools: list[dict[str, Any]]) -> list[ToolFindings]:
    findings = []
    for tool in tools:
        name = str(tool.get("name", "?"))
        schema = tool.get("inputSchema") or tool.get("input_schema") or {}
        params = list((schema.get("properties") or {}).keys()) if isinstance(schema, dict) else []
        hints = tool.get("annotations") or {}
        found = ToolFindings(name)
        found.sinks = [p for p in params if DESTINATION.match(p)]
        found.paths = [p for p in params if PATH.search(p) and p not in found.sinks]
        found.code = [p for p in params if CODE.match(p)]
        found.sends = bool(SEND_VERB.search(name)) or bool(hints.get("openWorldHint"))
        found.destructive = bool(DESTRUCTIVE_VERB.search(name)) or bool(
            hints.get("destructiveHint")
        )
        if hints.get("readOnlyHint") is True:
            found.destructive = False
        findings.append(found)
    return findings
