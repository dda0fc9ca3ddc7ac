"""Tool pinning: trust on first use, then every new or changed tool waits for a human.

A tool's identity is a hash of everything its tools/list entry carries: name, description,
inputSchema, and in `annotations` (the column) every other field — title, outputSchema,
annotations, icons, execution and `_meta` (hosts act on it, e.g. MCP Apps' ui.resourceUri,
and some pass it to the model), plus any field a later protocol adds. The approved version of
each tool lives in the `pins` table, per server; a different version seen later is stored
beside it as pending, with the text needed for a readable diff.

Pins written before every field was pinned (digest without the `v2:` prefix) covered name,
description, inputSchema, title and annotations. Such a pin is upgraded without a question
when the listed tool still matches it on those fields (the newly pinned fields are trusted on
first sight, as a first listing is); any difference in them is a change, asked as usual.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.engine.lookalike import KeyIndex
    from proxy.store.pins import Pins

FORMAT = "v2:"  # digest prefix of pins that cover every field
_CORE = ("name", "description", "inputSchema")  # stored in their own columns
_LEGACY_EXTRA = ("title", "annotations")  # what the annotations column held before v2

APPROVED = "approved"
PENDING = "pending"
REJECTED = "rejected"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call_key(arguments: dict[str, Any]) -> str:
    """Which call a one-time pin approval is for."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ToolVersion:
    name: str
    description: str
    input_schema: str  # canonical JSON
    annotations: str  # canonical JSON of every field but name, description and inputSchema

    @classmethod
    def of(cls, tool: dict[str, Any]) -> ToolVersion:
        description = tool.get("description")
        extra = {k: v for k, v in tool.items() if k not in _CORE and v is not None}
        return cls(
            name=str(tool.get("name", "")),
            description=description if isinstance(description, str) else "",
            input_schema=_canonical(tool.get("inputSchema", {})),
            annotations=_canonical(extra),
        )

    @functools.cached_property  # asked on every call; the fields never change
    def digest(self) -> str:
        text = "\x1f".join((self.name, self.description, self.input_schema, self.annotations))
        return FORMAT + hashlib.sha256(text.encode()).hexdigest()

    @functools.cached_property  # a listing indexes every version's keys
    def fold_keys(self) -> frozenset[str]:
        """The look-alike keys of what a reader takes for the tool's name: name and title."""
        from proxy.engine.lookalike import fold_name

        title = json.loads(self.annotations or "{}").get("title")
        names = [self.name, title] if isinstance(title, str) and title.strip() else [self.name]
        return frozenset(fold_name(n) for n in names)

    def legacy_view(self) -> ToolVersion:
        """This version as a pin written before v2 would have stored it."""
        extra = json.loads(self.annotations or "{}")
        kept = {k: extra[k] for k in _LEGACY_EXTRA if k in extra}
        return ToolVersion(self.name, self.description, self.input_schema, _canonical(kept))

    def fields(self) -> dict[str, Any]:
        """Every field the model sees, by its tools/list name."""
        return {"name": self.name, "description": self.description,
                "inputSchema": json.loads(self.input_schema or "{}"),
                **json.loads(self.annotations or "{}")}

    def as_tool(self) -> dict[str, Any]:
        """The tools/list shape again (for heuristics when only the pin is known)."""
        return self.fields()

    def render(self) -> list[str]:
        lines = [f"name: {self.name}", "description:",
                 *("  " + line for line in self.description.splitlines())]
        for key, value in self.fields().items():
            if key in ("name", "description"):
                continue
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
            lines += [f"{key}:", *("  " + line for line in text.splitlines())]
        return lines


# A changed tool's question is asked on every call of it until a human answers, with the same
# two versions: their fields and diff are made once (a 1 MB description took 280 ms a call;
# a few pairs are kept, each holding its two versions).
def changed_fields(old: ToolVersion | None, new: ToolVersion) -> list[str]:
    """The tools/list fields that differ between two versions (all of them for a new tool)."""
    return list(_changed_fields(old, new))


@functools.lru_cache(maxsize=16)
def _changed_fields(old: ToolVersion | None, new: ToolVersion) -> tuple[str, ...]:
    before = old.fields() if old is not None else {}
    after = new.fields()
    keys = [*after, *(k for k in before if k not in after)]
    return tuple(k for k in keys if before.get(k) != after.get(k))


@functools.lru_cache(maxsize=16)
def diff(old: ToolVersion | None, new: ToolVersion) -> str:
    before = old.render() if old is not None else []
    label = "approved" if old is not None else "(not approved before)"
    return "\n".join(
        difflib.unified_diff(
            before, new.render(), f"{new.name} {label}", f"{new.name} now", lineterm=""
        )
    )


@dataclass
class Pin:
    status: str
    approved: ToolVersion | None  # None while the tool was never approved
    pending: ToolVersion | None
    legacy: bool = False  # approved before every field was pinned (see the module doc)


class PinStore:
    """The pins of one server, read once and kept in memory; written through `store`."""

    def __init__(self, store: Pins, server: str) -> None:
        self._store = store
        self.server = server
        self.pins: dict[str, Pin] = {}
        for row in store.of_server(server):
            tool, status = row.tool, row.status
            current = ToolVersion(tool, row.description or "", row.input_schema or "{}",
                                  row.annotations or "{}")
            pending = (
                ToolVersion(tool, row.pending_description or "", row.pending_schema or "{}",
                            row.pending_annotations or "{}")
                if row.pending_digest else None
            )
            if status == APPROVED:
                legacy = not str(row.digest or "").startswith(FORMAT)
                self.pins[tool] = Pin(APPROVED, current, pending, legacy)
            else:
                self.pins[tool] = Pin(status, None, pending or current)

    def is_approved(self, version: ToolVersion) -> bool:
        """Is exactly this version approved? A pre-v2 pin that matches it on the fields it
        covered is upgraded to this version on the way (no question: see the module doc)."""
        pin = self.pins.get(version.name)
        if pin is None or pin.status != APPROVED or pin.approved is None:
            return False
        if pin.approved.digest == version.digest:
            return True
        if pin.legacy and pin.approved == version.legacy_view():
            self.approve(version)
            return True
        return False

    def key_index(self, listed: Mapping[str, ToolVersion] | None = None) -> KeyIndex:
        """The look-alike keys of this server's approved pins and of `listed`, for `lookalike`
        (built once for a whole listing: compared pair by pair, 2,000 tools took 22 s)."""
        from proxy.engine.lookalike import KeyIndex

        index = KeyIndex()
        for pin in self.pins.values():
            if pin.status == APPROVED and pin.approved is not None:
                index.add(pin.approved.name, pin.approved.fold_keys)
        for other in (listed or {}).values():
            index.add(other.name, other.fold_keys)
        return index

    def lookalike(
        self, version: ToolVersion, listed: Mapping[str, ToolVersion] | None = None,
        index: KeyIndex | None = None,
    ) -> tuple[str, str | None] | None:
        """(other name, its server or None for this one) when the name or title of `version`
        folds to the key of a different tool's name or title: an approved pin of this server,
        another tool of this listing, or — for a name that is not plain ASCII — an approved
        tool of any other server (names only)."""
        from proxy.engine.lookalike import alike, fold_name, is_plain

        if index is None:
            index = self.key_index(listed)
        twin = index.twin(version.name, version.fold_keys)
        if twin is not None:
            return twin, None
        if is_plain(version.name):
            return None  # case or separators alone between two servers is ordinary
        for server, name in self._store.approved_elsewhere(self.server):
            if name != version.name and alike(fold_name(name), fold_name(version.name)):
                return name, server
        return None

    def approve(self, version: ToolVersion) -> None:
        self.pins[version.name] = Pin(APPROVED, version, None)
        self._store.approve(self.server, version)

    def propose(self, version: ToolVersion) -> None:
        """Record a version that differs from the approved one (or a tool never approved)."""
        pin = self.pins.get(version.name)
        if pin is not None and pin.pending is not None and pin.pending.digest == version.digest:
            return
        if pin is None or pin.approved is None:
            self.pins[version.name] = Pin(PENDING, None, version)
            self._store.propose_new(self.server, version)
            return
        pin.pending = version
        self._store.propose_change(self.server, version)
