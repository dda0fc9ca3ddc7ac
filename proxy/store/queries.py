"""Filters over the audit log, shared by the CLI (proxy.store.events) and the app's History
(proxy.store.history).

Filters become parameterised WHERE clauses; nothing user-supplied is ever put into SQL text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EventFilter:
    """Which audit rows: every field that is set must match. Shared by the CLI and the app."""

    server: str | None = None
    tool: str | None = None
    verdict: str | None = None
    method: str | None = None
    trace_id: str | None = None
    since: float | None = None
    until: float | None = None
    text: str = ""  # substring of tool, server, method, reason or payload; or a trace id
    decisions_only: bool = False  # only rows that carry a verdict

    def where(self, prefix: str = "", *, text: bool = True) -> tuple[str, list[Any]]:
        """A parameterised SQL condition ("1" when nothing is filtered) and its parameters.

        `prefix` qualifies the columns (e.g. "e." in a join); `text=False` leaves the free
        text out, for callers that match it through the FTS index (see `fts_query`)."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("server", self.server),
            ("tool", self.tool),
            ("verdict", self.verdict.lower() if self.verdict else None),
            ("method", self.method),
            ("trace_id", self.trace_id),
        ):
            if value:
                clauses.append(f"{prefix}{column} = ?")
                params.append(value)
        if self.decisions_only and not self.verdict:
            clauses.append(f"{prefix}verdict IS NOT NULL")
        if self.since is not None:
            clauses.append(f"{prefix}ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{prefix}ts < ?")
            params.append(self.until)
        if text and self.text.strip():
            clause, args = like_clause(self.text, prefix)
            clauses.append(clause)
            params.extend(args)
        return (" AND ".join(clauses) or "1"), params


def like_clause(text: str, prefix: str = "") -> tuple[str, list[Any]]:
    """Substring of tool, server, method, reason or payload, or an exact trace id (a scan)."""
    text = text.strip()
    pattern = "%" + like_escape(text) + "%"
    # Payloads are stored as JSON text: a quote the user saw is \" there.
    in_json = "%" + like_escape(json.dumps(text, ensure_ascii=False)[1:-1]) + "%"
    p = prefix
    clause = (
        f"({p}tool LIKE ? ESCAPE '\\' OR {p}server LIKE ? ESCAPE '\\'"
        f" OR {p}method LIKE ? ESCAPE '\\' OR {p}reason LIKE ? ESCAPE '\\'"
        f" OR {p}payload LIKE ? ESCAPE '\\' OR {p}payload LIKE ? ESCAPE '\\'"
        f" OR {p}trace_id = ?)"
    )
    return clause, [*[pattern] * 5, in_json, text]


# The trigram index (schema v2, events_fts) finds substrings of at least this many characters.
FTS_MIN_CHARS = 3


def fts_query(text: str) -> str | None:
    """An FTS5 query for the same substring search as `like_clause`, or None when the text is
    too short for the trigram index. Both the text and its JSON-escaped form (how a payload
    stores a quote) are looked for; each is one quoted phrase, so no character is syntax."""
    if len(text.strip()) < FTS_MIN_CHARS:
        return None
    return " OR ".join('"' + form.replace('"', '""') + '"' for form in fts_forms(text))


def fts_forms(text: str) -> list[str]:
    """The text as typed, and as a payload stores it (JSON-escaped), once each."""
    text = text.strip()
    return list(dict.fromkeys((text, json.dumps(text, ensure_ascii=False)[1:-1])))


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
