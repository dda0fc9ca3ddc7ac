"""What happened to a call, in plain words, from its History row. No Qt.

"asked → you allowed it for this session", "nobody answered in 60 s → denied", "withheld: the
result looked like a prompt injection". The words never use the audit's code names (sink_gate,
gw2c, pass); those stay in the detail pane and the "All frames" view.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.history_query import Row
from app.wording import CONTRACTS

# What the History filter offers, as (label, value of events.final / events.verdict).
OUTCOME_CHOICES: list[tuple[str, str | None]] = [
    ("Any outcome", None),
    ("Allowed", "allow"),
    ("Denied", "deny"),
    ("Still waiting", "ask"),
    ("Result withheld", "block"),
    ("Result flagged", "warn"),
]
FRAME_CHOICES: list[tuple[str, str | None]] = [
    ("Any verdict", None),
    ("Allowed", "allow"),
    ("Denied", "deny"),
    ("Asked", "ask"),
    ("Result withheld", "block"),
    ("Result flagged", "warn"),
    ("Result passed", "pass"),
]
DIRECTIONS = {
    "c2s": "client → server",
    "s2c": "server → client",
    "gw2c": "Gatewatch → client",
    "c2gw": "client → Gatewatch",
    "gw2s": "Gatewatch → server",
    "gw": "Gatewatch",
}
REMEMBERED = {
    "once": "",
    "session": " for this session",
    "forever": " and trusted the destination",
}
_SECONDS = re.compile(r"within (\d+(?:\.\d+)?) s")


def _remember(detail: str | None) -> str:
    try:
        parsed: Any = json.loads(detail) if detail else {}
    except ValueError:
        return ""
    remember = parsed.get("remember") if isinstance(parsed, dict) else None
    return REMEMBERED.get(str(remember), "")


def _rule(row: Row) -> str:
    plain = CONTRACTS.get(row.contract or "") if row.contract != "default" else None
    return plain or row.reason or "a rule objected"


def decision_text(row: Row) -> str:
    """The call's decision: the rules', or the ask chain's after the rules asked."""
    if row.verdict == "allow":
        return "allowed"
    if row.verdict == "deny":
        if row.contract == "paused":
            return "denied: the server is paused"
        if row.contract in ("config", "upstream"):
            return f"not started: {row.reason or 'the server could not start'}"
        return f"denied: {_rule(row)}"
    if row.verdict != "ask":
        return row.verdict or ""
    by, outcome = row.outcome_by, row.outcome
    if outcome in (None, "ask"):
        if by == "elicitation":
            return "asked in the AI client — waiting for the answer"
        return "asked — waiting for an answer"
    allowed = outcome == "allow"
    if by == "app":
        if allowed:
            return "asked → you allowed it" + _remember(row.outcome_detail)
        reason = row.outcome_reason or ""
        said = reason.split("The user says: ", 1)[1] if "The user says: " in reason else ""
        text = "asked → you denied it for good" if "for good" in reason else \
            "asked → you denied it"
        return text + (f" and told the agent: “{said}”" if said else "")
    if by == "elicitation":
        return ("asked in the AI client → allowed" + _remember(row.outcome_detail)) if allowed \
            else "asked in the AI client → denied"
    if by == "trust":
        if allowed:
            return "allowed: you trusted this destination before"
        return "denied: you chose to always deny this destination"
    if by == "timeout":
        found = _SECONDS.search(row.outcome_reason or "")
        return f"nobody answered in {found.group(1)} s → denied" if found \
            else "nobody answered in time → denied"
    if by == "cancelled":
        return "asked → the client gave up waiting"
    if by == "fallback":
        return "nobody could be asked → denied"
    return ("allowed" if allowed else "denied") + (f" ({by})" if by else "")


def outcome_text(row: Row) -> str:
    """One line for the History table: the decision, and what became of the result."""
    if row.direction == "s2c" and row.method != "tools/call":
        # A detector verdict on a resource or prompt: no call row to land on.
        what = row.method or "result"
        return (f"{what} withheld: it looked like a prompt injection" if row.verdict == "block"
                else f"{what} flagged as a possible prompt injection")
    if row.direction != "c2s" or row.kind != "request":
        return frame_text(row)
    text = decision_text(row)
    if row.result_verdict == "block":
        text += " → result withheld: it looked like a prompt injection"
    elif row.result_verdict == "warn":
        text += " → result flagged as a possible prompt injection"
    return text


def frame_text(row: Row) -> str:
    """One frame in the "All frames" view: its direction and kind, and its own verdict."""
    where = DIRECTIONS.get(row.direction, row.direction)
    verdict = {"allow": "allowed", "deny": "denied", "ask": "asked", "block": "withheld",
               "warn": "flagged", "pass": "passed"}.get(row.verdict or "", "")
    kind = row.kind.replace("_", " ")
    return f"{where}, {kind}" + (f": {verdict}" if verdict else "")


def severity(row: Row) -> str:
    """good | bad | waiting | neutral, for the row's colour."""
    final = row.result_verdict if row.result_verdict == "block" else (row.outcome or row.verdict)
    if row.direction == "s2c" and row.method != "tools/call":
        final = row.verdict
    if final in ("deny", "block"):
        return "bad"
    if final in ("ask", "warn") or row.result_verdict == "warn":
        return "waiting"
    if final in ("allow", "pass"):
        return "good"
    return "neutral"
