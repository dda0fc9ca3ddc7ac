"""Tool pinning: trust on first use, then every new or changed tool waits for a human.

A tool's identity is a hash of its name, description, input schema, title and annotations.
The approved version of each tool lives in the `pins` table, per server; a different version
seen later is stored beside it as pending, with the text needed for a readable diff.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Write = Callable[[str, tuple[Any, ...]], None]

APPROVED = "approved"
PENDING = "pending"
REJECTED = "rejected"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ToolVersion:
    name: str
    description: str
    input_schema: str  # canonical JSON
    annotations: str  # canonical JSON of {title, annotations}

    @classmethod
    def of(cls, tool: dict[str, Any]) -> ToolVersion:
        description = tool.get("description")
        extra = {k: tool[k] for k in ("title", "annotations") if tool.get(k) is not None}
        return cls(
            name=str(tool.get("name", "")),
            description=description if isinstance(description, str) else "",
            input_schema=_canonical(tool.get("inputSchema", {})),
            annotations=_canonical(extra),
        )

    @property
    def digest(self) -> str:
        text = "\x1f".join((self.name, self.description, self.input_schema, self.annotations))
        return hashlib.sha256(text.encode()).hexdigest()

    def as_tool(self) -> dict[str, Any]:
        """The tools/list shape again (for heuristics when only the pin is known)."""
        tool: dict[str, Any] = {"name": self.name, "description": self.description}
        tool["inputSchema"] = json.loads(self.input_schema or "{}")
        tool.update(json.loads(self.annotations or "{}"))
        return tool

    def render(self) -> list[str]:
        schema = json.dumps(json.loads(self.input_schema or "{}"), indent=2, sort_keys=True)
        extra = json.dumps(json.loads(self.annotations or "{}"), indent=2, sort_keys=True)
        return [
            f"name: {self.name}",
            "description:",
            *("  " + line for line in self.description.splitlines()),
            "inputSchema:",
            *("  " + line for line in schema.splitlines()),
            "annotations:",
            *("  " + line for line in extra.splitlines()),
        ]


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


class PinStore:
    """The pins of one server, read once and kept in memory; writes go through `write`."""

    def __init__(self, db: sqlite3.Connection, write: Write, server: str) -> None:
        self._write = write
        self.server = server
        self.pins: dict[str, Pin] = {}
        rows = db.execute(
            "SELECT tool, status, description, input_schema, annotations, pending_digest, "
            "pending_description, pending_schema, pending_annotations FROM pins WHERE server = ?",
            (server,),
        ).fetchall()
        for row in rows:
            tool, status = row[0], row[1]
            current = ToolVersion(tool, row[2] or "", row[3] or "{}", row[4] or "{}")
            pending = (
                ToolVersion(tool, row[6] or "", row[7] or "{}", row[8] or "{}") if row[5] else None
            )
            if status == APPROVED:
                self.pins[tool] = Pin(APPROVED, current, pending)
            else:
                self.pins[tool] = Pin(status, None, pending or current)

    def approve(self, version: ToolVersion) -> None:
        now = time.time()
        self.pins[version.name] = Pin(APPROVED, version, None)
        self._write(
            "INSERT INTO pins (server, tool, digest, description, input_schema, annotations, "
            "status, pending_digest, pending_description, pending_schema, pending_annotations, "
            "first_seen, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'approved', NULL, NULL, NULL, "
            "NULL, ?, ?) ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, "
            "description = excluded.description, input_schema = excluded.input_schema, "
            "annotations = excluded.annotations, status = 'approved', pending_digest = NULL, "
            "pending_description = NULL, pending_schema = NULL, pending_annotations = NULL, "
            "updated_at = excluded.updated_at",
            (
                self.server,
                version.name,
                version.digest,
                version.description,
                version.input_schema,
                version.annotations,
                now,
                now,
            ),
        )

    def propose(self, version: ToolVersion) -> None:
        """Record a version that differs from the approved one (or a tool never approved)."""
        now = time.time()
        pin = self.pins.get(version.name)
        if pin is not None and pin.pending is not None and pin.pending.digest == version.digest:
            return
        if pin is None or pin.approved is None:
            self.pins[version.name] = Pin(PENDING, None, version)
            self._write(
                "INSERT INTO pins (server, tool, digest, description, input_schema, annotations,"
                " status, pending_digest, pending_description, pending_schema, "
                "pending_annotations, first_seen, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, "
                "description = excluded.description, input_schema = excluded.input_schema, "
                "annotations = excluded.annotations, pending_digest = excluded.pending_digest, "
                "pending_description = excluded.pending_description, "
                "pending_schema = excluded.pending_schema, "
                "pending_annotations = excluded.pending_annotations, "
                "updated_at = excluded.updated_at",
                (
                    self.server,
                    version.name,
                    version.digest,
                    version.description,
                    version.input_schema,
                    version.annotations,
                    version.digest,
                    version.description,
                    version.input_schema,
                    version.annotations,
                    now,
                    now,
                ),
            )
            return
        pin.pending = version
        self._write(
            "UPDATE pins SET pending_digest = ?, pending_description = ?, pending_schema = ?, "
            "pending_annotations = ?, updated_at = ? WHERE server = ? AND tool = ?",
            (
                version.digest,
                version.description,
                version.input_schema,
                version.annotations,
                now,
                self.server,
                version.name,
            ),
        )
