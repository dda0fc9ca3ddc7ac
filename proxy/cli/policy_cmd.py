"""`gatewatch policy check FILE`: validate a policy file and list what it covers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="validate a policy file and list the tools it covers")
    check.add_argument("file", type=Path)


def run(args: argparse.Namespace) -> int:
    from proxy.engine import PolicyError, load_policy
    from proxy.engine.packs import load_packs

    try:
        doc = load_policy(args.file)
        packs = {p.name for p in load_packs()}
    except PolicyError as exc:
        print(f"gatewatch policy: {exc}", file=sys.stderr)
        return 1
    for name, rules in doc.servers.items():
        if rules.pack is not None and rules.pack not in packs:
            print(f"gatewatch policy: {args.file}: server {name!r} names unknown pack "
                  f"{rules.pack!r} (known: {', '.join(sorted(packs))})", file=sys.stderr)
            return 1
    print(f"{args.file}: valid")
    if doc.trusted_destinations:
        print(f"  trusted everywhere: {', '.join(doc.trusted_destinations)}")
    if doc.allowlist:
        print(f"  tool allowlist: {', '.join(doc.allowlist)}")
    for name, rules in doc.servers.items():
        extras = []
        if rules.pack:
            extras.append(f"pack {rules.pack}")
        if rules.allowed_paths:
            extras.append(f"paths {', '.join(rules.allowed_paths)}")
        if rules.trusted_destinations:
            extras.append(f"trusts {', '.join(rules.trusted_destinations)}")
        print(f"  server {name}" + (f" ({'; '.join(extras)})" if extras else ""))
        for tool, entry in rules.tools.items():
            fields = ", ".join(f"{k}={_show(v)}" for k, v in entry.items())
            print(f"    {tool}: {fields or '(no fields)'}")
    return 0


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {getattr(v, 'pattern', v)}" for k, v in value.items()) + "}"
    return str(value)
