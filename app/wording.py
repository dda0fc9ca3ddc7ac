"""Plain-words text for questions and verdicts. Returns plain strings: the widgets escape them.

Kept apart from the widgets so the wording is tested and reviewed on its own.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

from app.questions import Question
from proxy.engine.lookalike import shown

CONTRACTS = {
    "sink_gate": "it sends data to a destination you have not trusted yet",
    "pinning": "the tool changed since you approved it",
    "pin": "the tool changed since you approved it",
    "tool_changed": "the tool changed since you approved it",
    "allowlist": "the tool is not on this server's allowlist",
    "budget": "the tool went over its call budget",
    "constraints": "an argument is outside what the policy allows",
    "constraint": "an argument is outside what the policy allows",
    "paused": "the server is paused in Gatewatch",
    "default": "no rule covered this call",
    "injection": "an argument looks like an injection payload",
    "detector": "the result looked like a prompt injection",
}


def headline(q: Question) -> str:
    if q.destination:
        return f"{q.tool} on {q.server} wants to send to {q.destination}"
    pin = (q.detail or {}).get("pin")
    if pin == "impersonation":
        other = (q.detail or {}).get("impersonates") or "another tool"
        return f"{shown(q.tool)} on {q.server} looks like {other}: it may impersonate it"
    if pin == "new":
        return f"{q.tool} on {q.server} is a new tool you have not approved"
    if pin == "unlisted":
        return f"{q.tool} on {q.server} is not in the server's list of tools"
    if pin == "flagged":
        return f"The description of {q.tool} on {q.server} looks like a prompt injection"
    if pin == "changed" or (q.detail and q.detail.get("diff")):
        return f"{q.tool} on {q.server} changed since you approved it"
    return f"{q.tool} on {q.server} needs your approval"


def why(q: Question) -> str:
    plain = CONTRACTS.get(q.contract)
    parts = [f"{plain[0].upper()}{plain[1:]}." if plain else "A rule wants a human to decide."]
    if q.reason:
        parts.append(f"{q.contract or 'rule'}: {q.reason}")
    return "\n".join(parts)


def origin(q: Question, now: float | None = None) -> str:
    o = q.origin
    if not o:
        if q.destination:
            return "Not seen in any tool output: it came from the client or the model."
        return ""
    where = f"{o.get('tool') or 'a tool'} on {o.get('server') or 'a server'}"
    when = ""
    if isinstance(o.get("ts"), (int, float)):
        when = f", {ago(float(o['ts']), now)}"
    kind = {"free_text": "in free text", "structured": "in a structured field"}.get(
        str(o.get("provenance")), ""
    )
    value = o.get("value") or q.destination or "The value"
    return f"{value} first appeared {kind + ' ' if kind else ''}in the output of {where}{when}."


def client(q: Question) -> str:
    c = q.client or {}
    name = c.get("name")
    if not name:
        return "an MCP client that has not said its name"
    return f"{name} {c.get('version') or ''}".rstrip()


def ago(ts: float, now: float | None = None) -> str:
    seconds = max(0, int((time.time() if now is None else now) - ts))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def clock(ts: float | None) -> str:
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def explain_event(ev: dict[str, Any]) -> str:
    """The History detail pane: why this verdict, in plain text."""
    lines = [
        f"{clock(ev.get('ts'))}  {ev.get('server')}  {ev.get('tool') or ev.get('method') or ''}",
        f"Verdict: {ev.get('verdict') or '—'}"
        + (f" (decided by {ev['decided_by']})" if ev.get("decided_by") else ""),
    ]
    if ev.get("contract"):
        plain = CONTRACTS.get(ev["contract"])
        lines.append(f"Contract: {ev['contract']}" + (f" — {plain}" if plain else ""))
    if ev.get("reason"):
        lines.append(f"Reason: {ev['reason']}")
    detail = _json(ev.get("detail"))
    if isinstance(detail, dict):
        rules = detail.get("rule_ids") or detail.get("rules")
        if rules:
            lines.append("Rules: " + ", ".join(str(r) for r in rules))
        taint = detail.get("taint") or detail.get("origin")
        if isinstance(taint, dict):
            seen = clock(taint["ts"]) if isinstance(taint.get("ts"), (int, float)) else "?"
            lines.append(
                f"Tainted value: {taint.get('value')} — first seen in "
                f"{taint.get('tool') or '?'} on {taint.get('server') or '?'} at {seen}"
            )
        for dest in detail.get("destinations") or []:
            if isinstance(dest, dict):
                lines.append(f"Destination {dest.get('param')}={dest.get('destination')}: "
                             f"{dest.get('verdict')} — {dest.get('why')}")
        excerpts = detail.get("excerpts")
        if isinstance(excerpts, dict):
            lines += [f"Matched {rule}: {text!r}" for rule, text in excerpts.items()]
        if isinstance(detail.get("score"), (int, float)):
            lines.append(f"Injection score: {detail['score']}")
        grant = detail.get("grant")
        if grant:
            lines.append(f"Grant: {grant}")
        if detail.get("diff"):
            lines.append("Tool change:\n" + str(detail["diff"]))
        shown = {"rule_ids", "rules", "taint", "origin", "grant", "diff", "destinations",
                 "excerpts", "score"}
        rest = {k: v for k, v in detail.items() if k not in shown}
        if rest:
            lines.append("Detail: " + json.dumps(rest, ensure_ascii=False, indent=2))
    if ev.get("latency_ms") is not None:
        lines.append(f"Latency: {ev['latency_ms']:.1f} ms")
    if ev.get("trace_id"):
        lines.append(f"Trace id: {ev['trace_id']}")
    lines.append(f"Session: {ev.get('session_id')}  ({ev.get('direction')}, {ev.get('kind')})")
    if ev.get("payload"):
        truncated = " (truncated)" if ev.get("payload_truncated") else ""
        lines.append(f"\nRaw frame{truncated}:\n{ev['payload']}")
    return "\n".join(lines)


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
