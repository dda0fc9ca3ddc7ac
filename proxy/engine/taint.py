"""Taint: destination-shaped values seen in untrusted tool output, and where they came from.

Provenance is what lets a benign reply through and stops a planted address. A value that a
result carries as structured data — the whole value of a field (`sender`, a `participants`
list, a `Label: value` line of a document) — is a *contact*: sending to it is asked, never
silently allowed and never denied. A value that only ever appeared inside free text (an e-mail
body, a web page, a file's prose), which is where injected instructions live, is *tainted*:
sending to it is denied. Sightings are kept in memory for this session and written to the
shared database, so a value read through one wrapped server is known to every other.
"""

from __future__ import annotations

import bisect
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from proxy.detector.extract import resource_text
from proxy.engine.destinations import (
    EMAIL,
    HOST,
    URL,
    URL_HOST,
    Destination,
    Found,
    destination_kind,
    extract_destinations,
    grant_key,
    native_finders,
    normalize_destination,
)
from proxy.engine.domains import parent_domains

if TYPE_CHECKING:
    from proxy.store.taint import TaintStore

STRUCTURED = "structured"
FREE_TEXT = "free_text"

# How a destination matched a sighting, most specific first.
VALUE = "value"  # the same destination, however it was written
PATH = "path"  # a URL under a URL that was seen (`evil.example/collect/SECRET`)
HOST_SEEN = "host"  # a URL on a host that was itself seen bare (`evil.example`, an IP)
LINK_HOST = "link_host"  # a URL on the host of a URL that was seen, on another path
PARENT = "parent"  # a host under a domain that was itself seen bare (`upload.evil.example`)
MAIL_HOST = "mail_host"  # a mailbox at or under a host that was itself seen bare
SUBSTRING = "substring"  # found inside text seen this session

# Keys whose (short) values name a party even when they are not address-shaped ("Alice").
CONTACT_KEYS = frozenset(
    [
        "sender",
        "from",
        "to",
        "cc",
        "bcc",
        "recipient",
        "recipients",
        "participant",
        "participants",
        "attendee",
        "attendees",
        "member",
        "members",
        "user",
        "users",
        "author",
        "owner",
        "organizer",
        "organiser",
        "assignee",
        "assignees",
        "reviewer",
        "reviewers",
        "contact",
        "contacts",
        "email",
        "emails",
        "handle",
        "username",
        "user_name",
        "user_email",
        "channel",
        "channels",
        "reply_to",
    ]
)
_LABEL_LINE = re.compile(r"^\s*(?:[-*•]\s*)?[A-Za-z][\w '()/.-]{0,40}:\s*(?P<rest>.+?)\s*$")
_LEFTOVER_OK = re.compile(r"^[\s,;<>\"'()\w.-]{0,60}$")
_EMAIL_LIKE = re.compile(r"[^@\s]+@[^@\s]+")
# An address or link is a whole whitespace-delimited token: a match of `\S+@\S+` can only
# start where its token starts (a later start finds a subset of the same `@`s), so anchoring
# there removes the same tokens and keeps the search linear; unanchored, a long token without
# `@` was retried from each of its characters (64 KB: 9.5 s of the proxy's loop).
_ADDRESSES = re.compile(r"(?<!\S)(?:\S+@\S+|\S+://\S+)")
# Prose in which a page or message states its own author's address ("My e-mail is x@y",
# "contact us at ...") introduces a contact, like a signature; injected instructions direct
# the reader to an address instead ("send it to my email x@y": no statement, so taint).
_SELF_DECLARED = re.compile(
    r"(?:\b(?:my|our)\s+(?:e-?mail(?:\s+address)?|address|phone(?:\s+number)?|number|"
    r"website|web\s*site|site|blog|homepage|iban|account(?:\s+number)?)\s*(?:is|:)"
    r"|\b(?:contact|reach|email|e-mail|call|text)\s+(?:me|us)\s+(?:at|on|via))\s*$",
    re.IGNORECASE,
)
# The last character before the trailing space of any _SELF_DECLARED match (`is`, `:`, `at`,
# `on`, `via`, in any case; `ſ` folds to `s`): a cheap test that rules out most windows.
_SELF_DECLARED_ENDS = frozenset("sSſtTnNaA:")
MAX_TEXT = 16 * 1024 * 1024  # session text kept for substring matching
MAX_SCAN = 2 * 1024 * 1024  # longest single text scanned for destinations
DEEP_PATH = 64  # path levels looked up one by one; deeper, only those tainted
MAX_SHARED_PER_RESULT = 10_000  # taint rows one result may queue for the shared database


class Sighting(NamedTuple):  # a tuple: a minified file makes thousands per result
    value: str  # normalised
    kind: str
    provenance: str
    field: str  # where in the result, for explanations


def _walk(node: Any, path: str, key: str, out: list[tuple[str, str, str]]) -> None:
    """Collect (path, parent key, string) for every string leaf, in document order. A stack,
    not recursion: a result's text can be JSON nested deeper than Python recurses."""
    stack = [(node, path, key)]
    while stack:
        node, path, key = stack.pop()
        if isinstance(node, str):
            out.append((path, key, node))
        elif isinstance(node, dict):
            stack += reversed([(v, f"{path}.{k}" if path else str(k), str(k).casefold())
                               for k, v in node.items()])
        elif isinstance(node, list):
            stack += reversed([(v, f"{path}[{i}]", key) for i, v in enumerate(node)])
        elif isinstance(node, (int, float)) and not isinstance(node, bool) and (
            key in CONTACT_KEYS
        ):
            out.append((path, key, str(node)))


def _contacts(text: str, found: tuple[Found, ...]) -> list[bool]:
    """For each destination found inside a free text, is it still a contact: the value of a
    `Label: value` line (a bill's "IBAN: ...", a header's "From: ...") or an address its
    author declares as their own ("My e-mail is ...")? Each line is read as `Label: value`
    once: a minified file is one 64 KB line holding thousands of links, and reading that line
    anew for each of them made taint extraction quadratic."""
    module = native_finders()
    if module is not None:
        answers: list[bool] = module.contacts(text, found, _value_start, _SELF_DECLARED.search)
        return answers
    hints = _line_hints(text, found)
    lines: dict[tuple[int, int], int | None] = {}  # line -> where its value starts
    out = []
    for (_value, _kind, start, _end), hint in zip(found, hints, strict=True):
        line_start, line_end, declared = hint
        line = (line_start, line_end)
        if line in lines:
            value_start = lines[line]
        else:
            value_start = lines[line] = _value_start(text[line_start:line_end])
        out.append((value_start is not None and value_start <= start - line_start) or (
            declared and _SELF_DECLARED.search(text, max(0, start - 60), start) is not None))
    return out


def _line_hints(text: str, found: tuple[Found, ...]) -> list[tuple[int, int, bool]]:
    """(line_start, line_end, declared) of each span: the line that holds it, and whether the
    text before it ends (past whitespace, within 60 characters) the way a _SELF_DECLARED match
    does, which rules out most spans before the regex runs."""
    breaks = [m.start() for m in re.finditer("\n", text)]
    out = []
    for _value, _kind, start, end in found:
        before = bisect.bisect_left(breaks, start) - 1
        line_start = breaks[before] + 1 if before >= 0 else 0
        after = bisect.bisect_left(breaks, end)
        line_end = breaks[after] if after < len(breaks) else len(text)
        tail = text[max(0, start - 60):start].rstrip()
        out.append((line_start, line_end, tail[-1:] in _SELF_DECLARED_ENDS))
    return out


def _value_start(line: str) -> int | None:
    """Where the value of a `Label: value` line starts, or None when the line is not one."""
    match = _LABEL_LINE.match(line)
    if match is None:
        return None
    rest = _ADDRESSES.sub("", match.group("rest"))
    if not _LEFTOVER_OK.match(rest) or len(rest.split()) > 6:
        return None
    return match.start("rest")


def sightings(result: Any) -> tuple[list[Sighting], list[str]]:
    """Destination sightings in a tools/call result, and its free texts (for substring match)."""
    return _sightings(_leaves_of(result))


def listed_values(result: Any) -> set[str]:
    """Every short value a result lists as data (names, ids, addresses), normalised: what a
    trusted directory-like output vouches for."""
    return {
        grant_key(text)  # as a human's approval: a URL's path case and https kept
        for _path, _key, text in _leaves_of(result)
        if len(text) <= 120 and "\n" not in text
    } - {""}


def _leaves_of(result: Any) -> list[tuple[str, str, str]]:
    leaves: list[tuple[str, str, str]] = []
    if isinstance(result, dict):
        structured = result.get("structuredContent")
        if structured is not None:
            _walk(structured, "structuredContent", "", leaves)
        content = result.get("content")
        for i, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            text = block.get("text")
            if isinstance(text, str):
                parsed = json_or_none(text)
                if parsed is not None:
                    _walk(parsed, f"content[{i}]", "", leaves)
                else:
                    leaves.append((f"content[{i}].text", "", text))
            resource = block.get("resource")
            found = resource_text(resource) if isinstance(resource, dict) else None
            if found:
                leaves.append((f"content[{i}].resource", "", found))
            if isinstance(block.get("uri"), str):
                leaves.append((f"content[{i}].uri", "uri", block["uri"]))
    else:
        _walk(result, "", "", leaves)
    return leaves


def _sightings(leaves: list[tuple[str, str, str]]) -> tuple[list[Sighting], list[str]]:
    found: dict[tuple[str, str], Sighting] = {}

    def add(value: str, kind: str, provenance: str, path: str) -> None:
        if value and (value, provenance) not in found:
            found[(value, provenance)] = Sighting(value, kind, provenance, path)

    texts: list[str] = []
    for path, key, text in leaves:
        text = text[:MAX_SCAN]
        kind = destination_kind(text)
        if kind is not None:
            add(normalize_destination(text), kind, STRUCTURED, path)
            continue
        if key in CONTACT_KEYS and len(text) <= 120 and "\n" not in text:
            add(normalize_destination(text), "name", STRUCTURED, path)
            for value, vkind, _s, _e in extract_destinations(text):
                add(value, vkind, STRUCTURED, path)
            continue
        texts.append(text)
        found_in = extract_destinations(text)
        contacts = _contacts(text, found_in)
        # add() inlined: a minified file finds thousands (every value has a key: no `if value`)
        for (value, vkind, _start, _end), contact in zip(found_in, contacts, strict=True):
            slot = (value, STRUCTURED if contact else FREE_TEXT)
            if slot not in found:
                found[slot] = Sighting(value, vkind, slot[1], path)
    return list(found.values()), texts


def json_or_none(text: str) -> Any:
    """The JSON value a text holds, or None. The stdlib's parser: orjson reads an integer past
    64 bits as a float, and its text is then another number. Nested deeper than the parser
    recurses, it is text (RecursionError is no ValueError: it once dropped a whole result)."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class Origin:
    value: str
    server: str
    tool: str | None
    session_id: str | None
    ts: float
    provenance: str
    matched: str = VALUE  # see VALUE, PATH, HOST_SEEN, LINK_HOST, SUBSTRING
    kind: str = ""  # of the sighting; URL_HOST for the host of a link

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "server": self.server,
            "tool": self.tool,
            "session_id": self.session_id,
            "ts": self.ts,
            "provenance": self.provenance,
            "matched": self.matched,
            "kind": self.kind,
        }


class TaintLog:
    """Sightings of this session in memory, everyone's in the shared `taint` table."""

    def __init__(self, store: TaintStore, server: str, session_id: str) -> None:
        self._store = store
        self.server = server
        self.session_id = session_id
        # value -> (provenance, the host of a link?) -> the first sighting's (tool, ts, kind):
        # an Origin is only built when a lookup finds one (a minified file records thousands).
        self._memory: dict[str, dict[tuple[str, bool], tuple[str, float, str]]] = {}
        self._chunks: list[str] = []
        self._chunk_starts: list[int] = []
        self._chunk_tools: list[str] = []
        self._chunk_ts: list[float] = []
        self._size = 0
        self._joined: str | None = None
        # site -> the keys with a path on it: what a path deeper than DEEP_PATH levels is
        # checked against (see `candidates`).
        self._paths: dict[str, set[str]] = {}

    def record(self, tool: str, seen: list[Sighting], texts: list[str]) -> None:
        now = time.time()
        shared = 0
        rows: list[tuple[str, str, str, str, str, str, float]] = []
        memory = self._memory
        for s in seen:
            for value, kind in aliases(s.value, s.kind):
                slot = (s.provenance, kind == URL_HOST)
                known = memory.get(value)
                if known is None:
                    known = memory[value] = {}
                elif slot in known:
                    continue
                known[slot] = (tool, now, kind)
                if "/" in value:
                    self._paths.setdefault(value.split("/", 1)[0], set()).add(value)
                shared += 1
                if shared > MAX_SHARED_PER_RESULT:
                    continue  # a data dump: this session still knows every value
                rows.append((value, kind, s.provenance, self.server, tool, self.session_id, now))
        self._store.record_all(rows)
        for text in texts:
            self._add_text(tool, now, text.casefold())

    def _add_text(self, tool: str, ts: float, text: str) -> None:
        self._chunk_starts.append(self._size)
        self._chunks.append(text)
        self._chunk_tools.append(tool)
        self._chunk_ts.append(ts)
        self._size += len(text) + 1
        self._joined = None
        while self._size > MAX_TEXT and len(self._chunks) > 1:
            dropped = len(self._chunks[0]) + 1
            del self._chunks[0], self._chunk_tools[0], self._chunk_ts[0], self._chunk_starts[0]
            self._chunk_starts = [start - dropped for start in self._chunk_starts]
            self._size -= dropped

    def lookup(self, dest: Destination | str, shaped: bool = True) -> Origin | None:
        """Where a destination was seen, by its most specific match (see `candidates`); at
        one level a structured sighting anywhere wins."""
        return self.lookup_all([dest], shaped)[0]

    def lookup_all(
        self, dests: Sequence[Destination | str], shaped: bool = True
    ) -> list[Origin | None]:
        """`lookup` of each destination, with one read of the shared table for all of them
        (a send's content can carry a thousand links: a query each cost more than the rest)."""
        under: dict[str, dict[int, set[str]]] = {}  # site -> its tainted paths, read once

        def paths_under(site: str) -> dict[int, set[str]]:
            if site not in under:
                found: dict[int, set[str]] = {}
                for key in (*self._paths.get(site, ()), *self._store.paths_under(site)):
                    found.setdefault(len(key), set()).add(key)
                under[site] = found
            return under[site]

        keyed = [(dest, candidates(dest, paths_under)) for dest in (
            Destination(d, destination_kind(d) or "other") if isinstance(d, str) else d
            for d in dests)]
        stored: dict[str, list[Origin]] = {}
        wanted = list(dict.fromkeys(key for _dest, keys in keyed for key, _how in keys))
        for row in self._store.sightings(wanted) if wanted else ():
            stored.setdefault(row.value, []).append(Origin(
                row.value, row.server, row.tool, row.session_id, row.ts, row.provenance,
                kind=row.kind or ""))
        return [self._resolve(dest, keys, stored, shaped) for dest, keys in keyed]

    def _resolve(
        self, dest: Destination, keys: list[tuple[str, str]], stored: dict[str, list[Origin]],
        shaped: bool,
    ) -> Origin | None:
        """One destination's origin from this session's sightings and the shared table's
        (`stored`, by value, in the table's order)."""
        hits: dict[tuple[str, str], list[Origin]] = {}
        for key, how in keys:
            for (provenance, _link), (tool, ts, kind) in self._memory.get(key, {}).items():
                hits.setdefault((key, how), []).append(
                    Origin(key, self.server, tool, self.session_id, ts, provenance, kind=kind))
        for key, how in keys:
            if key in stored:
                hits.setdefault((key, how), []).extend(stored[key])
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

    def _substring(self, value: str) -> Origin | None:
        if not self._chunks:
            return None
        if self._joined is None:
            self._joined = "\x00".join(self._chunks)
        at = self._joined.find(value)
        if at < 0:
            return None
        i = bisect.bisect_right(self._chunk_starts, at) - 1
        return Origin(
            value, self.server, self._chunk_tools[i], self.session_id, self._chunk_ts[i],
            FREE_TEXT, SUBSTRING,
        )


def _best(
    keys: list[tuple[str, str]], hits: dict[tuple[str, str], list[Origin]], *, by_name: bool
) -> Origin | None:
    """The first candidate with a sighting (at one level a structured one wins), among the
    matches by a parent's name (`by_name`) or among the others."""
    for key, how in keys:
        if (how in (PARENT, MAIL_HOST)) != by_name:
            continue
        found = hits.get((key, how), [])
        # Only a bare sighting of a host taints the whole host; a link on it is weaker
        # evidence (LINK_HOST, decided by the engine), and says nothing of other names.
        direct = [o for o in found if o.kind != URL_HOST]
        if direct or by_name:
            found = direct
        elif found:
            how = LINK_HOST
        if found:
            best = next((o for o in found if o.provenance == STRUCTURED), found[0])
            return replace(best, matched=how)
    return None


def aliases(value: str, kind: str) -> list[tuple[str, str]]:
    """The taint rows one sighting makes: itself, the mailbox without its `+tag`, and for a
    URL with a path its host (as LINK_HOST evidence)."""
    out = [(value, kind)]
    if kind == EMAIL and "@" in value:
        local, _, domain = value.rpartition("@")
        base = local.split("+", 1)[0]
        if base and base != local:
            out.append((f"{base}@{domain}", kind))
    elif kind in (URL, HOST) and "/" in value and "://" not in value:
        out.append((value.split("/", 1)[0], URL_HOST))
    return out


def _cuts(key: str, after: int) -> list[int]:
    """Where each ancestor path of `key` ends: every '/' past `after` (the site's end)."""
    cuts = []
    at = key.find("/", after + 1)
    while at != -1:
        cuts.append(at)
        at = key.find("/", at + 1)
    return cuts


def candidates(
    dest: Destination, paths_under: Callable[[str], dict[int, set[str]]] | None = None
) -> list[tuple[str, str]]:
    """(key, how) to look up for a destination, most specific first. Each ancestor path is
    a key of its own; past DEEP_PATH levels only the ancestors that `paths_under(site)` (the
    tainted keys with a path on the site, by length) holds are: a path of 20,000 levels made
    as many keys of up to 64 KB each (2.7 s and hundreds of MB for one send), and a cap alone
    would let a link planted deep enough go unrecognised."""
    out = [(dest.key, VALUE)]
    if dest.kind == EMAIL and dest.local is not None:
        base = dest.local.split("+", 1)[0]
        if base and base != dest.local:
            out.append((f"{base}@{dest.host}", VALUE))
        if dest.host:  # a host seen bare receives mail too, and so do the names under it
            out += [(name, MAIL_HOST) for name in (dest.host, *parent_domains(dest.host))]
        return out
    site = dest.site
    if site is not None and dest.key.startswith(site):
        key = dest.key
        cuts = _cuts(key, len(site))
        if len(cuts) > DEEP_PATH and paths_under is not None:
            known = paths_under(site)
            out += [(key[:i], PATH) for i in reversed(cuts) if i in known and key[:i] in known[i]]
        else:
            out += [(key[:i], PATH) for i in reversed(cuts)]
        if site != dest.key:
            out.append((site, HOST_SEEN))
        if dest.host is not None and site != dest.host and site.startswith(
            (dest.host + ":", f"[{dest.host}]:")
        ):
            out.append((dest.host, HOST_SEEN))  # a host seen bare is tainted on every port
    if dest.kind in (URL, HOST) and dest.host:
        out += [(name, PARENT) for name in parent_domains(dest.host)]
    return out
