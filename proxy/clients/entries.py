"""The server entries of one config file, read through the client's Shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath

from proxy.clients.catalog import Shape
from proxy.clients.document import Document, Key
from proxy.clients.nodes import Node

# `gatewatch run --name NAME -- COMMAND ARGS...`: five items in front of the original args.
WRAP_PREFIX_LEN = 5


class Transport(Enum):
    STDIO = "stdio"
    REMOTE = "remote"
    OTHER = "other"


@dataclass
class Fields:
    """Where one entry's command, args and env live, relative to the document root."""

    parent: tuple[Key, ...]  # the map holding command and args (Zed's older `command: {path}`)
    command: str
    args: str
    env: tuple[Key, ...]
    passes_env: str | None = None  # see Shape.passes_env; in the map holding command


@dataclass
class ServerEntry:
    name: str
    location: tuple[Key, ...]
    scope: str  # "" for the file's own servers, else the project path (Claude Code)
    transport: Transport
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    fields: Fields | None = None
    skip_reason: str | None = None

    @property
    def wrapped(self) -> bool:
        return wrapped_original(self.command, self.args) is not None

    @property
    def original(self) -> tuple[str, list[str]] | None:
        """The command line the client launched before wrapping (or now, when unwrapped)."""
        if self.command is None:
            return None
        return wrapped_original(self.command, self.args) or (self.command, self.args)


def is_gatewatch_command(command: str) -> bool:
    name = PurePath(command.replace("\\", "/")).name.lower()
    return name in ("gatewatch", "gatewatch.exe")


def wrapped_original(command: str | None, args: list[str]) -> tuple[str, list[str]] | None:
    """(command, args) inside a wrapped command line, or None when it is not wrapped."""
    if (command is None or not is_gatewatch_command(command) or len(args) < WRAP_PREFIX_LEN
            or args[0] != "run" or args[1] != "--name" or args[3] != "--"):
        return None
    return args[4], args[5:]


def read_entries(doc: Document, shape: Shape) -> list[ServerEntry]:
    out: list[ServerEntry] = []
    for container_path in shape.containers:
        for location, scope in _expand(doc.root, container_path, (), ""):
            container = doc.node(location)
            if container is None:
                continue
            if shape.listed and container.kind == "seq":
                for i, item in enumerate(container.items):
                    name_node = item.get("name") if item.kind == "map" else None
                    name = name_node.text() if name_node else None
                    out.append(_entry(item, name or f"#{i + 1}", (*location, i), scope, shape))
            elif not shape.listed and container.kind == "map":
                for m in container.members:
                    out.append(_entry(m.value, m.key, (*location, m.key), scope, shape))
    return out


def _expand(
    node: Node | None, path: tuple[str, ...], at: tuple[Key, ...], scope: str
) -> list[tuple[tuple[Key, ...], str]]:
    if node is None:
        return []
    if not path:
        return [(at, scope)]
    head, rest = path[0], path[1:]
    if head == "*":
        if node.kind != "map":
            return []
        return [hit for m in node.members for hit in _expand(m.value, rest, (*at, m.key), m.key)]
    return _expand(node.get(head) if node.kind == "map" else None, rest, (*at, head), scope)


def _entry(
    node: Node, name: str, location: tuple[Key, ...], scope: str, shape: Shape
) -> ServerEntry:
    if node.kind != "map":
        return ServerEntry(name, location, scope, Transport.OTHER,
                           skip_reason="not an object with a command")
    type_node = node.get("type")
    kind = (type_node.text() if type_node else None) or ""
    if node.get("url") or node.get("httpUrl") or node.get("serverUrl") or kind in (
            "http", "sse", "streamable_http", "streamable-http", "streamableHttp"):
        return ServerEntry(name, location, scope, Transport.REMOTE,
                           skip_reason="remote server (URL): nothing runs locally to wrap")
    if kind and kind != "stdio":
        return ServerEntry(name, location, scope, Transport.OTHER,
                           skip_reason=f"type {kind!r} is not a command the client launches")
    fields = Fields(location, shape.command, shape.args, (*location, shape.env), shape.passes_env)
    command_node = node.get(shape.command)
    if command_node is not None and command_node.kind == "map":  # Zed's older layout
        fields = Fields((*location, shape.command), "path", "args",
                        (*location, shape.command, "env"))
        command_node = command_node.get("path")
    command = command_node.text() if command_node else None
    if command is None:
        reason = ("provided by an editor extension" if node.get("settings") is not None
                  else "no command to launch")
        return ServerEntry(name, location, scope, Transport.OTHER, skip_reason=reason)
    parent = node if fields.parent == location else node.get(shape.command)
    args_node = parent.get(fields.args) if parent else None
    args = args_node.strings() if args_node else []
    if args is None:
        return ServerEntry(name, location, scope, Transport.OTHER, command,
                           skip_reason="args is not a list of strings")
    if is_gatewatch_command(command) and wrapped_original(command, args) is None:
        return ServerEntry(name, location, scope, Transport.OTHER, command, args,
                           skip_reason="this is Gatewatch's own server")
    env_node = node.get(shape.env) if fields.parent == location else (
        parent.get("env") if parent else None)
    env = {m.key: m.value.text() or "" for m in env_node.members} if (
        env_node and env_node.kind == "map") else {}
    return ServerEntry(name, location, scope, Transport.STDIO, command, args, env, fields)
