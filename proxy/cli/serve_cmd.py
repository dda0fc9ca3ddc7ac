"""`gatewatch serve`: Gatewatch as an MCP server over stdio (for agents and developers)."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        'Client config entry: {"command": "gatewatch", "args": ["serve"]}. '
        "Speaks both the handshake era and 2026-07-28."
    )


def run(args: argparse.Namespace) -> int:
    from proxy.serve.server import build_server

    build_server().run("stdio")
    return 0
