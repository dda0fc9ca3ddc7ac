"""Injected actions: values an injection planted, stopped when a state-changing call uses them.

The sink gate protects sends. An injected instruction can also make an agent delete a file by
id, change a password, reserve a hotel or move money, none of which sends anything. So values
in a tool result the detector flagged (warn or block) are *hot*: a later call of any
state-changing tool whose arguments use one is denied, on every wrapped server (flagged texts
are shared through the `hot_results` table). A value counts as used when an argument's value
(an id, a name, an amount, a password, a URL, an address) occurs as a whole word in the
flagged text, after the same normalisation (case, spacing, thousands separators).

The detector misses some injections, so values that occur only inside the free text of a clean
untrusted result (an e-mail body, a review, a file's content), never as a structured field of
a listing, are weighed too: a state-changing call using one is asked, with a warning that the
value came from a document. The same holds for a destination the sink gate would deny as
tainted: from a clean result it becomes a question, from a flagged one it stays a deny.
The user's own identities (trusted destinations, values listed by trusted outputs) are never
hot.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from proxy.decision import Decision
from proxy.detector.extract import resource_text
from proxy.engine.dates import date_keys, matches
from proxy.engine.destinations import extract_destinations
from proxy.engine.leaves import scalar_leaves
from proxy.engine.taint import json_or_none

if TYPE_CHECKING:
    from proxy.store.hot_results import HotResults

MAX_TEXT = 256 * 1024  # of one flagged result, kept for matching
MAX_SESSION_TEXT = 8 * 1024 * 1024  # clean free text kept for this session
MAX_VALUE = 200  # longer argument strings are content: only the identifiers inside count
_FLAGGED = ("warn", "block")

# Tool names whose words say they change something (split at _ - . and camel case). A verb
# with re- or un- in front counts too (reschedule, unshare, reopen, undelete).
STATE_VERBS = frozenset(
    [
        "accept", "add", "append", "apply", "approve", "archive", "assign", "attach", "ban",
        "block", "book", "buy", "cancel", "change", "charge", "clear", "close", "comment",
        "commit", "confirm", "create", "decline", "delete", "deploy", "deposit", "destroy",
        "detach", "disable", "drop", "edit", "empty", "enable", "erase", "exec", "execute",
        "fork", "forward", "grant", "import", "insert", "install", "invite", "kick", "kill",
        "label", "link", "lock", "mark", "merge", "modify", "move", "mute", "order",
        "patch", "pay", "pin", "post", "publish", "purchase", "purge", "push", "put",
        "refund", "register", "reject", "release", "remove", "rename", "reopen", "reply", "replace",
        "reserve", "reset", "respond", "restart", "restore", "revert", "revoke", "rollback",
        "run", "save", "schedule", "send", "set", "share", "sign", "start", "stop", "submit",
        "subscribe", "terminate", "transfer", "trash", "truncate", "unlink", "update",
        "upload", "upsert", "void", "vote", "wipe", "withdraw", "write",
    ]
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# A comma between a digit and three more: anchored on the comma, so the search skips to each
# comma instead of trying the lookbehind at every position of a 64 KB text.
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}\b)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_LEADING_ZERO = re.compile(r"-?0\d")
_ID_WORDS = frozenset(["id", "ids", "uuid", "uuids", "guid"])
_SECRET_WORDS = frozenset(["password", "passwd", "passphrase", "passcode", "pwd", "pin",
                           "secret"])
_MAX_CONTEXTS = 16  # listings remembered per structured value


def state_changing(tool: str, definition: dict[str, Any] | None) -> bool:
    """Does calling `tool` change something? MCP annotations first, then the name's verbs."""
    hints = (definition or {}).get("annotations")
    if isinstance(hints, dict):
        if hints.get("readOnlyHint") is True:
            return False
        # An explicit readOnlyHint false is the server saying the tool modifies something.
        if hints.get("destructiveHint") is True or hints.get("readOnlyHint") is False:
            return True
    return any(_is_verb(word.casefold()) for word in _WORDS.findall(tool))


def _is_verb(word: str) -> bool:
    if word in STATE_VERBS:
        return True
    return word[:2] in ("re", "un") and word[2:] in STATE_VERBS


def normalize_text(text: str) -> str:
    """NFKC (full-width "１３" is 13, "ﬁle" is file), casefolded, thousands separators dropped,
    every whitespace run one space. str.split() and re's \\s agree on what whitespace is;
    splitting and joining is about ten times faster than substituting each run."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    if "," in text:
        text = _THOUSANDS.sub("", text)
    words = text.split()
    if not words:
        return " " if text else ""
    joined = " ".join(words)
    head = " " if text[0].isspace() else ""
    tail = " " if text[-1].isspace() else ""
    return f"{head}{joined}{tail}" if head or tail else joined


def normalize_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip().strip("'\"").strip()
    # "10000.0" is 10000; "0012345678" is an account number, not 12345678.
    if _NUMBER.fullmatch(text) and not _LEADING_ZERO.match(text):
        number = float(text)
        text = str(int(number)) if number.is_integer() else text
    return normalize_text(text)


def _meaningful(value: str) -> bool:
    """Short values match too much prose ("a", "1", "no"): ids need two digits, words three
    letters."""
    if any(ch.isdigit() for ch in value):
        return len(value) >= 2
    return len(value) >= 3


def argument_values(arguments: Any) -> Iterator[tuple[str, str]]:
    """(path, normalised value) of every scalar in the arguments; from long strings, only the
    identifiers inside (addresses, links, account numbers)."""
    for path, leaf in scalar_leaves(arguments):
        if isinstance(leaf, str) and len(leaf) > MAX_VALUE:
            # The destination scanner is linear (anchored on @, :// and dots); a regex that
            # backtracks over every start position took minutes on a 3 MB argument.
            for _key, _kind, start, end in extract_destinations(leaf):
                yield path, normalize_value(leaf[start:end].rstrip(".,;:!?)"))
            continue
        value = normalize_value(leaf)
        if _meaningful(value):
            yield path, value


def _occurs(value: str, text: str) -> bool:
    """`value` as a whole word (or whole phrase) of `text`."""
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(value, start + 1)
    return False


# Separators an id is written with or without ("GB29 NWBK 6016 ...", "+1 (555) 010-2233").
_SEPARATORS = r"[\s\-./()+]*"
_SEPARATORS_RE = re.compile(_SEPARATORS)
_COMPACT_MIN = 8
_COMPACT_DIGITS = 5


def compact_id(value: str) -> str | None:
    """An id-like value (letters and digits, eight or more once separators are dropped) without
    its separators; None for anything else."""
    compact = _SEPARATORS_RE.sub("", value)
    if len(compact) < _COMPACT_MIN or not compact.isalnum() or sum(
            ch.isdigit() for ch in compact) < _COMPACT_DIGITS:
        return None
    return compact


def _spaced_pattern(value: str) -> re.Pattern[str] | None:
    """For an id-like value, a pattern that finds it however it was grouped; None for anything
    else."""
    compact = compact_id(value)
    if compact is None:
        return None
    # A literal first, then the look-behind: re scans for a leading literal fast (6x here).
    first = re.escape(compact[0])
    rest = "".join(_SEPARATORS + re.escape(ch) for ch in compact[1:])
    return re.compile(rf"{first}(?<![^\W_]{first}){rest}(?![^\W_])")


def spaced_in(value: str, compact: str, hot: HotText) -> bool:
    """Does the flagged text hold the id however it was grouped? What the pattern matches is the
    compact id once separators are dropped, so a text whose compact form lacks it is ruled out
    without compiling a pattern (0.25 ms each for an IP address; a log holds hundreds)."""
    if compact not in hot.compact:
        return False
    spaced = _spaced_pattern(value)
    return spaced is not None and spaced.search(hot.text) is not None


def result_parts(result: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """(free texts, structured values) of a result: a string that is a whole field of JSON
    data (or a short one-line text) is structured; prose is free text. Each structured value
    comes with the keys of the object holding it (casefolded, space-separated): what kind of
    thing it is an id of."""
    free: list[str] = []
    structured: list[tuple[str, str]] = []

    def walk(node: Any, top: bool) -> None:
        # A stack, not recursion: a result's text can be JSON nested deeper than Python recurses.
        stack = [(node, top, "")]
        while stack:
            node, top, keys = stack.pop()
            if isinstance(node, str):
                parsed = json_or_none(node) if top else None
                if parsed is not None:
                    stack.append((parsed, False, keys))
                elif len(node) <= 120 and "\n" not in node and len(node.split()) <= 8:
                    structured.append((node, keys))
                else:
                    free.append(node)
            elif isinstance(node, bool) or node is None:
                continue
            elif isinstance(node, (int, float)):
                structured.append((str(node), keys))
            elif isinstance(node, dict):
                inner = " ".join(str(k) for k in node)[:500].casefold()
                stack += reversed([(value, False, inner) for value in node.values()])
            elif isinstance(node, list):
                stack += reversed([(value, False, keys) for value in node])

    if isinstance(result, dict):
        for block in result.get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                walk(block["text"], True)
            elif isinstance(block, dict) and isinstance(block.get("resource"), dict):
                walk(resource_text(block["resource"]), True)
        # Read beside the blocks, not only without them: a client may hand the model either,
        # and a server may put different things in each. What both hold is counted once.
        if result.get("structuredContent") is not None:
            walk(result["structuredContent"], False)
    return list(dict.fromkeys(free)), list(dict.fromkeys(structured))


@dataclass(frozen=True)
class HotText:
    server: str
    tool: str | None
    session_id: str | None
    ts: float
    verdict: str
    text: str  # normalised

    @cached_property
    def dates(self) -> set[str]:
        return date_keys(self.text)

    @cached_property
    def compact(self) -> str:
        """The text without the separators an id may be grouped with (see spaced_in)."""
        return _SEPARATORS_RE.sub("", self.text)

    def origin(self, value: str) -> dict[str, Any]:
        return {"value": value, "server": self.server, "tool": self.tool,
                "session_id": self.session_id, "ts": self.ts, "provenance": "flagged",
                "verdict": self.verdict}


class HotValues:
    """Flagged result texts (this session's and, through the database, every proxy's), and
    this session's clean free text and structured values."""

    def __init__(self, store: HotResults, server: str, session_id: str) -> None:
        self._store = store
        self.server = server
        self.session_id = session_id
        self._flagged: list[HotText] = []
        self._last_row = 0
        self._free: list[tuple[str, str]] = []  # (tool, normalised clean free text)
        self._free_size = 0
        # value -> where it was a field: "tool key key ..." (the listing and its object's keys)
        self._structured: dict[str, set[str]] = {}

    # -- what results bring ----------------------------------------------------------------

    def record(self, tool: str, result: Any, verdict: str) -> None:
        free, structured = result_parts(result)
        if verdict in _FLAGGED:
            text = normalize_text("\n".join([*free, *(v for v, _ in structured)]))[:MAX_TEXT]
            hot = HotText(self.server, tool, self.session_id, time.time(), verdict, text)
            self._flagged.append(hot)
            self._store.record(hot.server, hot.tool, hot.session_id, hot.ts, hot.verdict,
                               hot.text)
            return
        for value, keys in structured:
            contexts = self._structured.setdefault(normalize_value(value), set())
            if len(contexts) < _MAX_CONTEXTS:
                contexts.add(f"{tool.casefold()} {keys}")
        for text in free:
            if self._free_size > MAX_SESSION_TEXT:
                break
            folded = normalize_text(text)
            self._free.append((tool, folded))
            self._free_size += len(folded)

    def _all_flagged(self) -> list[HotText]:
        for row in self._store.others_since(self._last_row, self.server, self.session_id):
            self._last_row = max(self._last_row, row.id)
            self._flagged.append(HotText(row.server, row.tool, row.session_id, row.ts,
                                         row.verdict, row.text))
        return self._flagged

    # -- what a call may use ---------------------------------------------------------------

    def review(
        self,
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
        # Each (path, value) once: a later repeat could only reach the verdict its first
        # occurrence reached (a minified file's links repeat: 2,017 values, 579 distinct).
        values = [(p, v) for p, v in dict.fromkeys(argument_values(arguments)) if not exempt(v)]
        # The flagged texts read once per call (one query), not once per argument value.
        flagged = self._all_flagged() if values else []
        for path, value in values if flagged else ():
            dates = date_keys(value) if changing else set()
            compact = None if dates else compact_id(value)  # a date is matched as a date
            for hot in flagged:
                # A date counts however it was written ("the 5th of May 2024" is 2024-05-05),
                # an id however it was grouped.
                date = matches(dates, hot.dates) if dates else None
                if (date is not None or _occurs(value, hot.text)
                        or (compact is not None and spaced_in(value, compact, hot))):
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

    def _listed(self, value: str, thing: str | None) -> bool:
        """Was `value` a field of a clean listing, and, for the id of a `thing` (a file_id),
        a field of a listing of such things? Event 13 of a calendar does not vouch for file 13."""
        contexts = self._structured.get(value)
        if not contexts:
            return False
        return not thing or any(thing in _things(context) for context in contexts)

    def _clean_source(self, value: str) -> str | None:
        """The tool whose clean free text (this session) contains `value`, if any."""
        for source, text in self._free:
            if _occurs(value, text):
                return source
        return None


def _content_paths(arguments: dict[str, Any], decision: Decision) -> set[str] | None:
    """Of a call the sink gate judged, the paths not to weigh as free-text values: None (all)
    for a send with a destination, whose content goes with it; for one with no destination
    (an event with no participants: a state change like any other), its long strings."""
    if decision.contract != "sink_gate":
        return set()
    if decision.detail.get("destinations"):
        return None
    return {path for path, leaf in scalar_leaves(arguments)
            if isinstance(leaf, str) and len(leaf) > MAX_VALUE}


@lru_cache(maxsize=1024)
def _things(context: str) -> frozenset[str]:
    """The words of a listing's context ("list_files id_ filename"), plurals as singulars:
    whole words, so a listing of profiles is not one of files."""
    return frozenset(w.casefold().removesuffix("s") for w in _WORDS.findall(context))


def _key_words(path: str) -> list[str]:
    """The casefolded words of an argument path's last key (`email_ids[0]` -> email, ids)."""
    key = path.rsplit(".", 1)[-1].split("[", 1)[0]
    return [w.casefold() for w in _WORDS.findall(key)]


def _names_a_secret(path: str) -> bool:
    """Does the argument hold a credential (`password`, `new_passphrase`, `pin`)?"""
    return any(w in _SECRET_WORDS for w in _key_words(path))


def _id_of(path: str) -> str | None:
    """For an argument naming an id (`file_id`, `eventId`, `email_ids[0]`), the thing it is
    the id of ("file"; "" for a bare `id`); None for any other argument."""
    words = _key_words(path)
    if not words or words[-1] not in _ID_WORDS:
        return None
    return words[-2].removesuffix("s") if len(words) > 1 else ""


def _identifier_like(value: str) -> bool:
    """An id, an amount, an address, a link, a password-like token or a name of several words;
    not a single ordinary word."""
    if len(value) < 4:
        return False
    return any(ch.isdigit() or ch in "@/:._-" for ch in value) or " " in value
