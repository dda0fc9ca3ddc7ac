"""Policy files: parsing, strict validation and the field-by-field merge of layers.

Three kinds of layer describe a tool: schema heuristics (derived from tools/list), a curated
server pack (packs/servers/*.yaml) and user policy files. A user entry merges over the pack
entry field by field, so adding an allowlist never switches the sink gate off; `replace: true`
drops what the lower layers said. The file format is documented in docs/policy.md.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy.errors import ConfigFileError
from proxy.yaml_lines import LineDict, read_yaml


class PolicyError(ConfigFileError):
    """A policy or pack file that cannot be used. Never ignored: the proxy refuses to start."""


# Tool entry fields and how a higher layer combines with a lower one.
UNION = "union"  # sets that only grow: a user can add a sink, never silently drop one
OVERRIDE = "override"
PER_KEY = "per_key"
TOOL_FIELDS: dict[str, str] = {
    "exfiltrating": OVERRIDE,
    "sink_params": UNION,
    "trusted_destinations": UNION,
    "max_calls": OVERRIDE,
    "path_params": UNION,
    "allowed_paths": OVERRIDE,
    "arg_patterns": PER_KEY,
    "arg_allowlists": PER_KEY,
    "output_trusted": OVERRIDE,
}
_TOOL_META = {"replace", "note"}
_SERVER_FIELDS = {"pack", "trusted_destinations", "allowed_paths", "output_trusted", "tools"}
_PACK_FIELDS = {"pack", "description", "source", "match", "fingerprint"} | (
    _SERVER_FIELDS - {"pack"}
)
_POLICY_FIELDS = {"version", "trusted_destinations", "allowlist", "servers"}


@dataclass
class ServerRules:
    """What one layer says about one server."""

    origin: str  # 'pack:NAME' or 'user:PATH', for explanations
    pack: str | None = None
    trusted_destinations: tuple[str, ...] = ()
    allowed_paths: tuple[str, ...] | None = None
    output_trusted: bool | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Pack(ServerRules):
    name: str = ""
    path: Path | None = None
    description: str = ""
    source: str = ""
    match: tuple[str, ...] = ()
    fingerprint: tuple[str, ...] = ()

    def matches_name(self, server: str) -> bool:
        low = server.casefold()
        return any(fnmatch.fnmatchcase(low, pattern.casefold()) for pattern in self.match)


@dataclass
class PolicyDoc:
    """One user policy file."""

    path: Path | None
    trusted_destinations: tuple[str, ...] = ()
    allowlist: tuple[str, ...] | None = None
    servers: dict[str, ServerRules] = field(default_factory=dict)

    def rules_for(self, server: str) -> list[ServerRules]:
        """Entries that apply to a server: globs first, the exact name last (it wins)."""
        globs = [
            rules
            for key, rules in self.servers.items()
            if key != server and fnmatch.fnmatchcase(server, key)
        ]
        exact = self.servers.get(server)
        return [*globs, *([exact] if exact is not None else [])]


class _Checker:
    """Validates parsed YAML against the policy schema, naming file and line on failure."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def fail(self, node: Any, key: Any, reason: str) -> PolicyError:
        line = node.line_of(key) if isinstance(node, LineDict) else 0
        return PolicyError(self.path, line, reason)

    def mapping(self, node: Any, parent: Any, key: Any, what: str) -> LineDict:
        if node is None:
            empty = LineDict()
            empty.line = parent.line_of(key) if isinstance(parent, LineDict) else 0
            empty.key_lines = {}
            return empty
        if not isinstance(node, LineDict):
            raise self.fail(parent, key, f"{what} must be a mapping, got {_kind(node)}")
        return node

    def known(self, node: LineDict, allowed: set[str], what: str) -> None:
        for key in node:
            if key not in allowed:
                hint = ", ".join(sorted(allowed))
                raise self.fail(node, key, f"unknown field {key!r} in {what} (known: {hint})")

    def strings(self, node: LineDict, key: str) -> tuple[str, ...]:
        value = node[key]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(node, key, f"{key!r} must be a list of non-empty strings")
        return tuple(value)

    def boolean(self, node: LineDict, key: str) -> bool:
        value = node[key]
        if not isinstance(value, bool):
            raise self.fail(node, key, f"{key!r} must be true or false, got {value!r}")
        return value

    def tool(self, node: Any, parent: LineDict, name: str) -> dict[str, Any]:
        entry = self.mapping(node, parent, name, f"tool {name!r}")
        self.known(entry, set(TOOL_FIELDS) | _TOOL_META, f"tool {name!r}")
        out: dict[str, Any] = {}
        for key in entry:
            if key == "note":
                continue
            if key in ("exfiltrating", "output_trusted", "replace"):
                out[key] = self.boolean(entry, key)
            elif key == "max_calls":
                value = entry[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise self.fail(entry, key, "'max_calls' must be a whole number >= 0")
                out[key] = value
            elif key in ("sink_params", "trusted_destinations", "path_params", "allowed_paths"):
                out[key] = self.strings(entry, key)
            elif key == "arg_patterns":
                patterns = self.mapping(entry[key], entry, key, "'arg_patterns'")
                out[key] = {str(p): self.regex(patterns, p) for p in patterns}
            elif key == "arg_allowlists":
                lists = self.mapping(entry[key], entry, key, "'arg_allowlists'")
                out[key] = {str(p): self.allowed_values(lists, p) for p in lists}
        return out

    def regex(self, node: LineDict, key: Any) -> re.Pattern[str]:
        value = node[key]
        if not isinstance(value, str):
            raise self.fail(node, key, f"pattern for {key!r} must be a string")
        try:
            return re.compile(value)
        except re.error as exc:
            raise self.fail(node, key, f"invalid regex for {key!r}: {exc}") from None

    def allowed_values(self, node: LineDict, key: Any) -> frozenset[str]:
        value = node[key]
        if not isinstance(value, list) or not all(
            isinstance(v, (str, int, float, bool)) for v in value
        ):
            raise self.fail(node, key, f"allowlist for {key!r} must be a list of plain values")
        return frozenset(str(v) for v in value)

    def server(self, node: LineDict, rules: ServerRules, allowed: set[str], what: str) -> None:
        self.known(node, allowed, what)
        if "pack" in node and "pack" in allowed and not isinstance(rules, Pack):
            if not isinstance(node["pack"], str):
                raise self.fail(node, "pack", "'pack' must be the name of a pack")
            rules.pack = node["pack"]
        if "trusted_destinations" in node:
            rules.trusted_destinations = self.strings(node, "trusted_destinations")
        if "allowed_paths" in node:
            rules.allowed_paths = self.strings(node, "allowed_paths")
        if "output_trusted" in node:
            rules.output_trusted = self.boolean(node, "output_trusted")
        tools = self.mapping(node.get("tools"), node, "tools", "'tools'")
        for name in tools:
            if not isinstance(name, str) or not name:
                raise self.fail(tools, name, "a tool name must be a non-empty string")
            rules.tools[name] = self.tool(tools[name], tools, name)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _read(path: Path) -> Any:
    return read_yaml(path, error=PolicyError)


def _top(data: Any, path: Path, what: str) -> LineDict:
    if data is None:
        data = LineDict()
        data.line, data.key_lines = 1, {}
    if not isinstance(data, LineDict):
        raise PolicyError(path, 1, f"a {what} must be a YAML mapping, got {_kind(data)}")
    return data


def load_policy(path: Path | str) -> PolicyDoc:
    """Parse and validate a user policy file. Raises PolicyError(path, line, reason)."""
    path = Path(path).expanduser()
    data = _top(_read(path), path, "policy file")
    check = _Checker(path)
    check.known(data, _POLICY_FIELDS, "the policy file")
    doc = PolicyDoc(path=path)
    if "version" in data and data["version"] != 1:
        raise check.fail(data, "version", "only 'version: 1' is understood")
    if "trusted_destinations" in data:
        doc.trusted_destinations = check.strings(data, "trusted_destinations")
    if "allowlist" in data:
        names = check.strings(data, "allowlist")
        for name in names:
            if "." not in name.strip(".") and not name.endswith(".*"):
                raise check.fail(data, "allowlist", f"{name!r} is not 'server.tool'")
        doc.allowlist = names
    servers = check.mapping(data.get("servers"), data, "servers", "'servers'")
    for name in servers:
        if not isinstance(name, str) or not name:
            raise check.fail(servers, name, "a server name must be a non-empty string")
        rules = ServerRules(origin=f"user:{path}")
        entry = check.mapping(servers[name], servers, name, f"server {name!r}")
        check.server(entry, rules, _SERVER_FIELDS, f"server {name!r}")
        doc.servers[name] = rules
    return doc


def load_pack(path: Path) -> Pack:
    """Parse and validate one server pack. Raises PolicyError(path, line, reason)."""
    data = _top(_read(path), path, "pack")
    check = _Checker(path)
    if not isinstance(data.get("pack"), str) or not data["pack"]:
        raise check.fail(data, "pack", "a pack needs 'pack: NAME'")
    pack = Pack(origin=f"pack:{data['pack']}", name=data["pack"], path=path)
    check.server(data, pack, _PACK_FIELDS, f"pack {pack.name!r}")
    for key in ("description", "source"):
        if key in data:
            if not isinstance(data[key], str):
                raise check.fail(data, key, f"{key!r} must be text")
            setattr(pack, key, data[key].strip())
    if not pack.source:
        raise check.fail(
            data, "pack", "a pack must say where its tool schemas came from ('source: ...')"
        )
    pack.match = check.strings(data, "match") if "match" in data else (pack.name,)
    if "fingerprint" in data:
        pack.fingerprint = check.strings(data, "fingerprint")
    return pack


def merge_tool(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """One tool entry over another, field by field (see TOOL_FIELDS); `replace: true` wins all."""
    if over.get("replace"):
        return {k: v for k, v in over.items() if k != "replace"}
    out = dict(base)
    for key, value in over.items():
        how = TOOL_FIELDS.get(key)
        if how is None:
            continue
        if how == UNION and key in out:
            out[key] = tuple(dict.fromkeys((*out[key], *value)))
        elif how == PER_KEY and key in out:
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out
