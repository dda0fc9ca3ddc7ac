"""`gatewatch packs`: the curated server packs and what each covers."""

from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one pack tool by tool")


def run(args: argparse.Namespace) -> int:
    from proxy.engine import PolicyError
    from proxy.engine.packs import load_packs, packs_root

    try:
        packs = load_packs()
    except PolicyError as exc:
        print(f"gatewatch packs: {exc}", file=sys.stderr)
        return 1
    if args.name is None:
        print(f"{len(packs)} packs in {packs_root()}")
        for each in packs:
            sink_tools = [t for t, e in each.tools.items() if e.get("exfiltrating")]
            print(f"  {each.name:<13} {len(each.tools):>3} tools, {len(sink_tools)} sinks; "
                  f"servers named {', '.join(each.match)}")
        print("`gatewatch packs NAME` shows one pack tool by tool.")
        return 0
    pack = next((p for p in packs if p.name == args.name), None)
    if pack is None:
        print(f"gatewatch packs: no pack {args.name!r} (known: "
              f"{', '.join(p.name for p in packs)})", file=sys.stderr)
        return 1
    print(f"{pack.name}: {pack.description}")
    print(f"  source: {pack.source}")
    print(f"  applies to servers named: {', '.join(pack.match)}"
          + (f"; or listing {', '.join(pack.fingerprint)}" if pack.fingerprint else ""))
    for tool, entry in pack.tools.items():
        notes = []
        if entry.get("exfiltrating"):
            sinks = ", ".join(entry.get("sink_params") or ()) or "every argument"
            notes.append(f"sink: {sinks}")
        if "max_calls" in entry:
            notes.append(f"budget {entry['max_calls']}/session")
        if entry.get("path_params"):
            notes.append(f"paths: {', '.join(entry['path_params'])}")
        print(f"  {tool:<32} {'; '.join(notes)}")
    return 0
