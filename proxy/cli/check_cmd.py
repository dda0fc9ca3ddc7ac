"""`gatewatch check`: the verdict a tools/call would get, without running anything."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", required=True, help="server name, as in `gatewatch run --name`")
    parser.add_argument("--tool", required=True)
    parser.add_argument("--args", default="{}", metavar="JSON", help="the call's arguments")
    parser.add_argument(
        "--untrusted",
        action="append",
        default=[],
        metavar="TEXT",
        help="text a tool returned earlier in the session (repeatable): its destinations taint",
    )
    parser.add_argument("--policy", type=Path, help="user policy YAML layered over the packs")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")


def run(args: argparse.Namespace) -> int:
    from proxy.checking import CheckError, check_call
    from proxy.cli.output import paint, use_colour, verdict_colour
    from proxy.cli.text_input import from_argument
    from proxy.relay import strict

    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        print(f"gatewatch check: --args is not JSON: {exc}", file=sys.stderr)
        return 2
    try:  # the relay's own reading: what it refuses never gets a verdict
        strict.parse(os.fsencode(args.args))
    except strict.FrameError as exc:
        print(f"gatewatch check: --args is JSON the proxy would refuse ({exc.reason})",
              file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("gatewatch check: --args must be a JSON object", file=sys.stderr)
        return 2
    try:
        untrusted = [from_argument(text) for text in args.untrusted]
        result = check_call(args.server, args.tool, arguments, untrusted=untrusted,
                            policy_path=args.policy)
    except CheckError as exc:
        print(f"gatewatch check: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, default=str))
        return 0
    decision, layers, pack = result.decision, result.layers, result.pack
    colour = use_colour()
    print(f"{paint(decision.verdict.upper(), verdict_colour(decision.verdict), colour)} "
          f"[{decision.contract}] {decision.reason}")
    print(f"  policy: {' < '.join(layers)}" + (f" (pack {pack})" if pack else ""))
    if decision.origin:
        o = decision.origin
        print(f"  origin: {o['value']} seen as {o['provenance']} in {o['server']}.{o['tool']}")
    return 0
