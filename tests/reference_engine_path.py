"""The injected-action review, the planted-link check and the taint lookup as they were before
session 8, kept to test the batched ones against (tests/test_engine_batched.py).

As of commit de829ae: `review` read the flagged texts and compiled an id's grouping pattern
once per argument value, `_planted_links` and `lookup` read the taint table once per link.
The helpers they call did not change and are imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from proxy.decision import Decision
from proxy.engine.dates import date_keys, matches
from proxy.engine.destinations import (
    Destination,
    destination_kind,
    extract_destinations,
    grant_key,
)
from proxy.engine.engine import MAX_CONTENT_SCAN, ToolPolicy, _leaves
from proxy.engine.hot_values import (
    _content_paths,
    _id_of,
    _identifier_like,
    _names_a_secret,
    _occurs,
    _spaced_pattern,
    argument_values,
    state_changing,
)
from proxy.engine.taint import (
    _EMAIL_LIKE,
    EMAIL,
    FREE_TEXT,
    LINK_HOST,
    Origin,
    _best,
    candidates,
)


def review(
    self: Any,
    tool: str,
    definition: dict[str, Any] | None,
    arguments: dict[str, Any],
    decision: Decision,
    exempt: Callable[[str], bool],
) -> Decision:
    """The final decision for a call the other contracts judged `decision`.

    `exempt(value)` says whether a value is one of the user's own identities."""
    changing = state_changing(tool, definition)
    if not changing and decision.contract != "sink_gate":
        return decision  # reads and the like: nothing to review
    values = [(p, v) for p, v in argument_values(arguments) if not exempt(v)]
    for path, value in values:
        dates = date_keys(value) if changing else set()
        spaced = None if dates else _spaced_pattern(value)  # a date is matched as a date
        for hot in self._all_flagged():
            # A date counts however it was written ("the 5th of May 2024" is 2024-05-05),
            # an id however it was grouped.
            date = matches(dates, hot.dates) if dates else None
            if (date is not None or _occurs(value, hot.text)
                    or (spaced is not None and spaced.search(hot.text) is not None)):
                where = f"{hot.server}.{hot.tool}" if hot.tool else hot.server
                named = f" (the date {date})" if date is not None else ""
                return Decision(
                    "deny", "injected_action",
                    f"{path}={value!r}{named} came from a result of {where} that the "
                    f"detector flagged as prompt injection ({hot.verdict})",
                    origin=hot.origin(value),
                    detail={"param": path, "value": value, "state_changing": changing},
                )
    skip = _content_paths(arguments, decision)
    if changing and decision.verdict == "allow" and skip is not None:
        # Identifiers and names, not every word a document shares with the call. A send's
        # destinations were judged by the sink gate and its content goes with it; a call
        # of a sending tool with no destination is a state change like any other.
        for path, value in values:
            thing = _id_of(path)
            secret = _names_a_secret(path)
            if path in skip or self._listed(value, thing) or not (
                    _identifier_like(value) or thing is not None or secret):
                continue
            source = self._clean_source(value)
            if source is None:
                continue
            where = f"{self.server}.{source}"
            if secret:
                # A password is the user's to choose; one a document supplies is planted.
                return Decision(
                    "deny", "injected_action",
                    f"{path} is set to a value that only the text of a document gives "
                    f"({where} output): a password an untrusted document chose",
                    detail={"param": path, "provenance": "free_text"},
                )
            if thing is not None:
                # An id is what a listing shows; one that only a document's prose names is
                # what an injection plants (measured: no benign task passes one).
                kind = f"{thing} " if thing else ""
                return Decision(
                    "deny", "injected_action",
                    f"{path}={value!r} is the id of a {kind}that no listing showed; only "
                    f"the text of a document names it ({where} output): list them first",
                    detail={"param": path, "value": value, "provenance": "free_text"},
                )
            return Decision(
                "ask", "injected_action",
                f"{path}={value!r} appears only in the text of a document "
                f"({where} output), not in a listing: check it is what you asked for",
                detail={"param": path, "value": value, "provenance": "free_text"},
            )
    return decision


def lookup(self: Any, dest: Destination | str, shaped: bool = True) -> Origin | None:
    """Where a destination was seen, by its most specific match (see `candidates`); at
    one level a structured sighting anywhere wins."""
    if isinstance(dest, str):
        dest = Destination(dest, destination_kind(dest) or "other")
    keys = candidates(dest)
    hits: dict[tuple[str, str], list[Origin]] = {}
    for key, how in keys:
        for (provenance, _link), (tool, ts, kind) in self._memory.get(key, {}).items():
            hits.setdefault((key, how), []).append(
                Origin(key, self.server, tool, self.session_id, ts, provenance, kind=kind))
    for row in self._store.sightings([key for key, _how in keys]):
        stored = Origin(row.value, row.server, row.tool, row.session_id, row.ts,
                        row.provenance, kind=row.kind or "")
        for key, how in keys:
            if key == stored.value:
                hits.setdefault((key, how), []).append(stored)
    origin = _best(keys, hits, by_name=False)
    # E-mail addresses are always extracted whole, so a substring hit on one could only be
    # the tail of a longer address: substrings are for hosts, handles, channels, numbers.
    if origin is None and shaped and len(dest.key) >= 4 and dest.kind != EMAIL and (
        not _EMAIL_LIKE.fullmatch(dest.key)
    ):
        origin = self._substring(dest.key)
    # The weakest evidence last: a name under a host seen bare (PARENT, MAIL_HOST) only
    # speaks for a destination nothing else was found for.
    return origin if origin is not None else _best(keys, hits, by_name=True)


def planted_links(
    self: Any, policy: ToolPolicy, args: dict[str, Any]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Links inside the content of a send that were planted in untrusted free text (a
    phishing link an injection asks to pass on): asked, since a human should see them."""
    sinks = {p.split(".")[0] for p in policy.sink_params}
    for param, text in _leaves({k: v for k, v in args.items() if k not in sinks}, ""):
        content = text[:MAX_CONTENT_SCAN]
        for value, kind, start, end in extract_destinations(content):
            if kind not in ("url", "host", "ip"):
                continue
            dest = Destination(value, kind)
            if policy.trusted.match(dest) is not None:
                continue
            origin = lookup(self._taint, dest, shaped=False)
            if origin is not None and origin.provenance == FREE_TEXT and (
                origin.matched != LINK_HOST
            ):
                yield param, grant_key(content[start:end]), origin.as_dict()
