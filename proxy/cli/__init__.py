"""The `gatewatch` command.

Each subcommand lives in its own module with `configure(parser)` and `run(args) -> int`, and is
imported only when it is the one asked for, so `gatewatch run` pulls in nothing it does not need.
To add a subcommand, add one line to COMMANDS.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "proxy.cli.run_cmd",
        "wrap an MCP server: gatewatch run --name NAME -- COMMAND [ARGS...]",
    ),
    "logs": ("proxy.cli.logs_cmd", "show the audit log"),
    "stats": ("proxy.cli.stats_cmd", "counts and latency from the audit log"),
    "version": ("proxy.cli.version_cmd", "version, Python, platform, database"),
    "detect": ("proxy.cli.detect_cmd", "scan TEXT (or - for stdin) for prompt injection"),
    "rules": ("proxy.cli.rules_cmd", "rule packs: lint [--strict] [FILES...], list"),
    "check": ("proxy.cli.check_cmd", "the verdict a hypothetical tool call would get"),
    "policy": ("proxy.cli.policy_cmd", "validate a policy file: gatewatch policy check FILE"),
    "packs": ("proxy.cli.packs_cmd", "list the server packs and what each covers"),
    "approve": ("proxy.cli.approve_cmd", "answer approval questions in this terminal"),
    "trust": ("proxy.cli.trust_cmd", "list, add or revoke remembered approvals"),
    "doctor": (
        "proxy.cli.doctor_cmd",
        "check the environment: Python, Qt, database, packs, clients",
    ),
    "serve": ("proxy.cli.serve_cmd", "run Gatewatch itself as an MCP server over stdio"),
    "bench": ("proxy.cli.bench_cmd", "run the benchmarks (relay, engine, detector, history, ask)"),
    "clients": ("proxy.cli.clients_cmd", "MCP client configs found and which servers are wrapped"),
    "wrap": ("proxy.cli.wrap_cmd", "route client servers through Gatewatch (preview, backup)"),
    "unwrap": ("proxy.cli.unwrap_cmd", "restore client servers' original commands"),
}


def _top_parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items())
    return argparse.ArgumentParser(
        prog="gatewatch",
        description="Gatewatch: a local security gateway for MCP tool servers.\n"
        "With no command, starts the tray app.",
        epilog=f"commands:\n{lines}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv == ["--show"]:
        # The tray app starts from `gatewatch` (app.launcher), which hands the rest to us.
        print("gatewatch: the tray app is started by the `gatewatch` command "
              "(python -m app); see `gatewatch --help` for the commands", file=sys.stderr)
        return 2
    name = argv[0]
    if name in ("-h", "--help"):
        _top_parser().print_help()
        return 0
    if name == "--version":
        from proxy import __version__

        print(f"gatewatch {__version__}")
        return 0
    if name not in COMMANDS:
        _top_parser().print_usage(sys.stderr)
        print(f"gatewatch: unknown command {name!r}; see `gatewatch --help`", file=sys.stderr)
        return 2
    from proxy import logs

    logs.configure("command")
    module_name, help_ = COMMANDS[name]
    module = import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"gatewatch {name}", description=help_)
    module.configure(parser)
    args = parser.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
