"""`gatewatch clients`: the MCP client configs here and whether each server is wrapped."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", type=Path, action="append", default=[],
                        help="also look in this project directory (repeatable)")
    parser.add_argument("--add", type=Path, metavar="FILE",
                        help="remember a config file with an `mcpServers` object, then list")
    parser.add_argument("--forget", type=Path, metavar="FILE", help="stop listing an added file")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from proxy.cli.output import paint, use_colour
    from proxy.clients import discovery
    from proxy.clients.entries import Transport
    from proxy.clients.health import check_entry
    from proxy.clients.nodes import ConfigSyntaxError
    from proxy.clients.summary import unprotected
    from proxy.redact import redact_argv

    if args.add:
        try:
            discovery.add_path(args.add)
        except (OSError, ConfigSyntaxError, ValueError) as exc:
            print(f"gatewatch clients: cannot add {args.add}: {exc}", file=sys.stderr)
            return 1
    if args.forget and not discovery.forget_path(args.forget):
        print(f"gatewatch clients: {args.forget} was not an added file", file=sys.stderr)
        return 1
    loaded = [discovery.load(c) for c in discovery.discover(projects=args.project)]
    if args.json:
        out = []
        for item in loaded:
            servers = []
            for e in item.entries:
                health = check_entry(item.config, e)
                servers.append({
                    "name": e.name, "scope": e.scope, "transport": e.transport.value,
                    "wrapped": e.wrapped, "command": e.original[0] if e.original else None,
                    "args": redact_argv(e.original[1]) if e.original else [],
                    "skip_reason": e.skip_reason,
                    "problem": health.problem,
                })
            out.append({"client": item.config.client.id, "label": item.config.client.label,
                        "path": str(item.config.path), "scope": item.config.scope,
                        "error": item.error, "servers": servers})
        print(json.dumps(out, indent=2))
        return 0
    colour = use_colour()
    if not loaded:
        print("No MCP client configs found. Add one with `gatewatch clients --add FILE`.")
        return 0
    for item in loaded:
        print(paint(f"{item.config.client.label}", "bold", colour)
              + f" ({item.config.client.id})" + paint(f"  {item.config.path}", "dim", colour))
        if item.error:
            print("  " + paint(f"cannot read: {item.error}", "red", colour))
            continue
        if not item.entries:
            print("  (no servers)")
        width = max((len(e.name) for e in item.entries), default=0)
        for e in item.entries:
            where = paint(f"  [project {e.scope}]", "dim", colour) if e.scope else ""
            if e.transport is not Transport.STDIO:
                state, tint, detail = "skipped    ", "dim", e.skip_reason or ""
            else:
                problem = check_entry(item.config, e).problem
                original = e.original or ("", [])
                detail = " ".join(redact_argv([original[0], *original[1]]))
                if problem:
                    state, tint, detail = "broken     ", "red", problem
                elif e.wrapped:
                    state, tint = "protected  ", "green"
                else:
                    state, tint = "unprotected", "yellow"
            print(f"  {paint(state, tint, colour)}  {e.name:<{width}}  {detail}{where}")
    sentence = unprotected(loaded).sentence()
    if sentence:
        print("\n" + paint(f"{sentence[0].upper()}{sentence[1:]}.", "yellow", colour)
              + " Preview the change with `gatewatch wrap --all --dry-run`.")
    return 0
