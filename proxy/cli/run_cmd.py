"""`gatewatch run --name NAME -- COMMAND [ARGS...]`: wrap one MCP server."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "gatewatch run --name NAME [--db PATH] [--policy FILE] -- COMMAND [ARGS...]"
    parser.add_argument("--name", required=True, help="server name shown in the audit and the app")
    parser.add_argument("--db", type=Path, help="audit database (default: per-user data dir)")
    parser.add_argument("--policy", type=Path, help="user policy YAML layered over the packs")
    parser.add_argument(
        "--max-frame-mb",
        type=float,
        default=64,
        help="larger frames are never passed: a request is refused, an answer withheld",
    )
    parser.add_argument(
        "--health-port",
        type=int,
        metavar="N",
        help="serve GET /health on 127.0.0.1:N (for supervisors)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the upstream server's command")


def run(args: argparse.Namespace) -> int:
    from proxy import paths
    from proxy.runner import RunOptions, run_proxy

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(
            "gatewatch run: give the server's command after --, e.g.\n"
            "  gatewatch run --name fs -- npx -y @modelcontextprotocol/server-filesystem ~/docs",
            file=sys.stderr,
        )
        return 2
    opts = RunOptions(
        name=args.name,
        argv=command,
        db_path=args.db or paths.db_path(),
        policy_path=args.policy,
        max_parse=int(args.max_frame_mb * 1024 * 1024),
        health_port=args.health_port,
    )
    return asyncio.run(run_proxy(opts))
