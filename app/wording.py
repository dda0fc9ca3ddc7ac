"""Plain-words text for questions and verdicts. Returns plain strings: the widgets escape them.

Kept apart from the widgets so the wording is tested and reviewed on its own.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

from app.questions import Question
from proxy.decision import destination_checks
from proxy.engine.lookalike import shown

CONTRACTS = {
    "sink_gate": "it would send data to a destination you have not trusted yet",
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


_WHY_DESTINATION = (
    ("is not a vouched destination", "not trusted yet, and no trusted tool listed it"),
    ("is a contact seen in output of", "seen in a tool's output, not approved yet"),
    ("is a link found in untrusted text", "a link that appeared in untrusted text"),
    ("is a link planted in untrusted text", "a link from untrusted text, inside the content"),
    ("came from untrusted text", "came from untrusted text"),
)


def plain_destination_why(why: str) -> str:
    for start, plain in _WHY_DESTINATION:
        if why.startswith(start):
            return plain
    return why


def why(q: Question) -> str:
    """Why a human is asked, in sentences: never the contract's code name or raw rule text."""
    plain = CONTRACTS.get(q.contract)
    parts = [f"{plain[0].upper()}{plain[1:]}." if plain else "A rule wants a human to decide."]
    detail = q.detail or {}
    asked = [c for c in q.checked if c.verdict in ("ask", "deny")]
    if asked:
        for c in asked:
            parts.append(f"{c.param or 'destination'}: {c.destination} — "
                         f"{plain_destination_why(c.why)}")
    elif detail.get("pin") == "flagged":
        rules = detail.get("rules")
        parts.append("Its description reads like instructions to the AI"
                     + (f" (rules {', '.join(map(str, rules))})." if rules else "."))
    elif q.contract not in ("sink_gate", "pinning") and q.reason:
        parts.append(q.reason)
    return "\n".join(parts)


def merged(n: int) -> str:
    if n <= 1:
        return ""
    return f"{n} identical calls (same tool, same arguments) are waiting — one answer settles all."


def risky(q: Question) -> bool:
    """Allowing is not the ordinary answer: the tool reads like an injection, or a value came
    from untrusted output."""
    detail = q.detail or {}
    return detail.get("pin") == "flagged" or q.origin is not None


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


# clientInfo names of well-known apps (what they send in `initialize`).
KNOWN_CLIENTS = {
    "claude-ai": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor-vscode": "Cursor",
    "Visual Studio Code": "VS Code",
    "Visual Studio Code - Insiders": "VS Code Insiders",
    "gemini-cli-mcp-client": "Gemini CLI",
    "codex-mcp-client": "Codex",
    "Zed": "Zed",
    "windsurf-client": "Windsurf",
    "goose": "Goose",
    "Cline": "Cline",
}
_LIBRARIES = {"mcp", "mcp-client", "python-sdk", "typescript-sdk"}


def client(q: Question) -> str:
    """The app behind the call: the client whose config starts this server when Gatewatch
    knows it, else what the client calls itself (which may be just its MCP library)."""
    c = q.client or {}
    name = str(c.get("name") or "")
    said = f"{name} {c.get('version') or ''}".rstrip()
    if q.launched_by:
        if not name or KNOWN_CLIENTS.get(name) == q.launched_by:
            return q.launched_by
        return f"{q.launched_by} (the client calls itself “{said}”)"
    if name in KNOWN_CLIENTS:
        return f"{KNOWN_CLIENTS[name]} ({said})"
    if not name:
        return "an MCP client that has not said its name"
    if name in _LIBRARIES:
        return f"an app using the MCP library “{said}” (no client config names this server)"
    return said


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


DECIDERS = {
    "rules": "your rules and policy",
    "trust": "a destination you trusted (or always deny)",
    "elicitation": "you, in the AI client",
    "app": "you, in the Gatewatch app",
    "timeout": "nobody (the question timed out)",
    "fallback": "nobody could be asked",
    "cancelled": "the client (it cancelled the call)",
    "detector": "the prompt-injection detector",
}


def explain_call(row: Any, frames: list[dict[str, Any]]) -> str:
    """The History detail pane for one call: what happened, why, and each step."""
    from app.history_query import COLUMNS, Row
    from app.outcomes import frame_text, outcome_text

    lines = [f"{clock(row.ts)}  {row.server} · {row.tool or row.method or ''}",
             f"What happened: {outcome_text(row)}", ""]
    if row.contract and row.verdict != "allow":
        plain = CONTRACTS.get(row.contract)
        if plain:
            lines.append(f"Why: {plain[0].upper()}{plain[1:]}.")
    if row.reason:
        lines.append(f"Gatewatch's reason: {row.reason}")
    answer = row.outcome_reason or ""
    if row.reason and answer.startswith(f"{row.reason}; not approved: "):
        answer = answer[len(row.reason) + len("; not approved: "):]
    if answer and answer != row.reason:
        lines.append(f"Answer: {answer}")
    if row.result_reason:
        lines.append(f"Result: {row.result_reason}"
                     + (f" (trace id {row.result_trace})" if row.result_trace else ""))
    head = frames[0] if frames else {}
    detail = _json(head.get("detail"))
    if isinstance(detail, dict):
        for c in destination_checks(detail.get("destinations")):
            lines.append(f"Destination {c.param} = {c.destination}: "
                         f"{plain_destination_why(c.why)}")
    if head.get("payload"):
        lines += ["", "The call as the client sent it"
                  + (" (cut short)" if head.get("payload_truncated") else "") + ":",
                  _pretty(head["payload"])]
    if len(frames) > 1:
        lines += ["", "Steps:"]
        for f in frames:
            step = frame_text(Row._make(f.get(c) for c in COLUMNS))
            why = f.get("reason") or ""
            took = f" ({f['latency_ms']:.0f} ms)" if f.get("latency_ms") is not None else ""
            lines.append(f"  {clock(f.get('ts'))}  {step}{took}" + (f" — {why}" if why else ""))
    return "\n".join(lines)


def _pretty(payload: str) -> str:
    try:
        return json.dumps(json.loads(payload), ensure_ascii=False, indent=2)
    except ValueError:
        return payload


def explain_event(ev: dict[str, Any]) -> str:
    """The History detail pane in the "All frames" view: one frame, why its verdict."""
    decided = ev.get("decided_by")
    lines = [
        f"{clock(ev.get('ts'))}  {ev.get('server')}  {ev.get('tool') or ev.get('method') or ''}",
        f"Verdict: {ev.get('verdict') or '—'}"
        + (f", decided by {DECIDERS.get(decided, decided)}" if decided else ""),
    ]
    if ev.get("contract"):
        plain = CONTRACTS.get(ev["contract"])
        lines.append(f"Rule: {plain}" + f" ({ev['contract']})" if plain else
                     f"Rule: {ev['contract']}")
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
        for c in destination_checks(detail.get("destinations")):
            lines.append(f"Destination {c.param}={c.destination}: {c.verdict} — {c.why}")
        excerpts = detail.get("excerpts")
        if isinstance(excerpts, dict):
            lines += [f"Matched {rule}: {text!r}" for rule, text in excerpts.items()]
        if isinstance(detail.get("score"), (int, float)):
            lines.append(f"Injection score: {detail['score']}")
        lines += _detector_lines(detail)
        grant = detail.get("grant")
        if grant:
            lines.append(f"Grant: {grant}")
        if detail.get("diff"):
            lines.append("Tool change:\n" + str(detail["diff"]))
        shown = {"rule_ids", "rules", "taint", "origin", "grant", "diff", "destinations",
                 "excerpts", "score", "layer", "model", "policy"}
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


_LAYERS = {"rules": "the rule packs", "model": "the learned model",
           "classifier": "the local classifier", "time_budget": "the scan's time budget",
           "none": "no layer (nothing found)", "error": "an error in the scan"}


def _detector_lines(detail: dict[str, Any]) -> list[str]:
    """Which detector layer decided a scanned result, and the learned model's score."""
    lines = []
    layer = detail.get("layer")
    if isinstance(layer, str):
        policy = f" (policy rule {detail['policy']})" if detail.get("policy") else ""
        lines.append(f"Detector: decided by {_LAYERS.get(layer, layer)}{policy}")
    model = detail.get("model")
    if isinstance(model, dict) and isinstance(model.get("score"), (int, float)):
        cut = " — stopped at the deadline" if model.get("stopped") else ""
        lines.append(f"Model: {model['score']:.3f} ({model.get('label')}) on "
                     f"{str(model.get('excerpt') or '')!r}{cut}")
    return lines


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
