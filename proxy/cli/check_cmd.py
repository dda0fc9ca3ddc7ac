"""`gatewatch check`: the verdict a tools/call would get, without running anything."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


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
    import tempfile

    from proxy.cli.output import paint, use_colour, verdict_colour
    from proxy.detector import PackError
    from proxy.engine import Engine, PolicyError
    from proxy.settings import SettingsError
    from proxy.store.database import Database

    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        print(f"gatewatch check: --args is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("gatewatch check: --args must be a JSON object", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        # A scratch database: the check must not pin tools or record taint for real.
        db = Database.open(Path(tmp) / "check.db")
        _copy_trust(db, args.server, args.tool)
        try:
            engine = Engine.create(args.server, "check", db, policy_path=args.policy,
                                   **_scanners())
        except (PolicyError, PackError, SettingsError) as exc:
            print(f"gatewatch check: {exc}", file=sys.stderr)
            return 1
        # Listed as a server would list it; the first listing is approved (trust on first use).
        engine.tools_listed([_as_listed(args.tool, arguments)])
        for text in args.untrusted:
            engine.result_seen("(untrusted)", {"content": [{"type": "text", "text": text}]})
        decision = engine.decide(args.tool, arguments)
        layers = list(engine.policy_for(args.tool).layers)
        pack = engine.pack
        db.close()
    out: dict[str, Any] = {
        "verdict": decision.verdict,
        "contract": decision.contract,
        "reason": decision.reason,
        "destination": decision.destination,
        "origin": decision.origin,
        "pack": pack,
        "layers": layers,
        "detail": decision.detail,
    }
    if args.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    colour = use_colour()
    print(f"{paint(decision.verdict.upper(), verdict_colour(decision.verdict), colour)} "
          f"[{decision.contract}] {decision.reason}")
    print(f"  policy: {' < '.join(layers)}" + (f" (pack {pack})" if pack else ""))
    if decision.origin:
        o = decision.origin
        print(f"  origin: {o['value']} seen as {o['provenance']} in {o['server']}.{o['tool']}")
    return 0


def _as_listed(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {key: {} for key in arguments}
    return {"name": tool, "inputSchema": {"type": "object", "properties": props}}


def _copy_trust(db: Any, server: str, tool: str) -> None:
    """Remembered approvals do count: copy the valid ones for this server and tool."""
    import sqlite3

    from proxy import paths
    from proxy.store.database import Database

    if not paths.db_path().exists():
        return
    try:
        real = Database.open(paths.db_path(), readonly=True)
        grants = real.trust.live_for_tool(server, tool)
        real.close()
    except sqlite3.Error:
        return
    db.trust.copy_in(grants)


def _scanners() -> dict[str, Any]:
    """Arguments are scanned for injection as the proxy scans them (when the detector is on)."""
    from proxy.components import scanners, user_detector
    from proxy.settings import load_settings

    return scanners(user_detector() if load_settings().detector else None)
