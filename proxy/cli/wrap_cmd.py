"""`gatewatch wrap`: route a client's MCP servers through `gatewatch run`, after a preview."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proxy.clients.changes import Moved


def configure(parser: argparse.ArgumentParser) -> None:
    add_selection_args(parser)
    parser.add_argument("--secrets-to-keyring", action="store_true",
                        help="move secret-looking env values into the OS keyring")
    parser.add_argument("--allow-plaintext-keyring", action="store_true",
                        help="move them even when the keyring is a plaintext file "
                             "(keyrings.alt); refused without this")
    parser.add_argument("--delete-plaintext-backups", action="store_true",
                        help="after moving secrets, delete the backups that still hold them")


def add_selection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", nargs="?",
                        help="client id, as `gatewatch clients` shows it (e.g. cursor)")
    parser.add_argument("--server", help="only the server with this name")
    parser.add_argument("--all", action="store_true", help="every client")
    parser.add_argument("--path", type=Path, help="only this config file")
    parser.add_argument("--project", type=Path, action="append", default=[],
                        help="also look in this project directory (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="write without asking")


def run(args: argparse.Namespace) -> int:
    return run_action("wrap", args)


def run_action(action: str, args: argparse.Namespace) -> int:
    from proxy.clients import changes, discovery
    from proxy.clients.catalog import CLIENTS
    from proxy.clients.executable import ExecutableNotFound

    prog = f"gatewatch {action}"
    if not (args.client or args.all or args.path):
        print(f"{prog}: name a client, give --path FILE, or pass --all", file=sys.stderr)
        return 2
    if args.client and args.client not in CLIENTS:
        print(f"{prog}: unknown client {args.client!r}; known: {', '.join(CLIENTS)}",
              file=sys.stderr)
        return 2
    configs = discovery.discover(projects=args.project)
    if args.path and not any(c.path.absolute() == args.path.absolute() for c in configs):
        configs.append(discovery.config_for_path(args.path))
    chosen = changes.select(args.client, args.server, args.path)
    try:
        plan = changes.make_plan(
            "wrap" if action == "wrap" else "unwrap",
            changes.load_all(configs), chosen,
            secrets_to_keyring=getattr(args, "secrets_to_keyring", False),
            allow_plaintext_keyring=getattr(args, "allow_plaintext_keyring", False))
    except ExecutableNotFound as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    for skip in plan.skipped:
        where = skip.config.path if skip.server == "*" else f"{skip.server} ({skip.config.path})"
        print(f"skipped {where}: {skip.reason}", file=sys.stderr)
    if not plan.changes:
        print("Nothing to change.")
        return 0
    sys.stdout.write(plan.preview())
    if args.dry_run:
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"{prog}: not writing without confirmation; pass --yes", file=sys.stderr)
            return 1
        if input("Write these changes? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Nothing written.")
            return 1
    done = changes.apply(plan)
    written = {path for path, _ in done.written}
    for path, copy in done.written:
        print(f"wrote {path} (backup: {copy})")
    for _path, reason in done.failed:
        print(f"{prog}: {reason}", file=sys.stderr)
    moved = [m for c in plan.changes if c.config.path in written for m in c.moved]
    if moved:
        _report_moves(moved, done.plaintext_backups,
                      getattr(args, "delete_plaintext_backups", False))
    if done.restart:
        print("To pick up the change:")
        for line in done.restart:
            print(f"  {line}")
    return 1 if done.failed else 0


def _report_moves(moved: list[Moved], backups: list[Path], delete: bool) -> None:
    """Say which values went into the keyring, and deal with the backups that still hold them."""
    from proxy.clients import secrets

    print(f"Moved {len(moved)} value(s) into the keyring ({secrets.backend().label}):")
    for item in moved:
        print(f"  {item.describe()}")
    if not backups:
        return
    print(f"{len(backups)} backup(s) still hold these values in plaintext:")
    for copy in backups:
        print(f"  {copy}")
    if not delete and sys.stdin.isatty():
        delete = input("Delete them? (unwrap does not need them) [y/N] ").strip().lower() in (
            "y", "yes")
    if delete:
        for copy in backups:
            copy.unlink(missing_ok=True)
        print("Deleted them.")
    else:
        print("They are readable only by you (the backups folder is private); delete them once "
              "you no longer need them, or pass --delete-plaintext-backups next time.")
