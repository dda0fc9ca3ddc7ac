"""`gatewatch trust list|add|revoke`: the remembered approvals (server + tool + destination)."""

from __future__ import annotations

import argparse
import sys
import time


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    show = sub.add_parser("list", help="show grants (valid ones unless --all)")
    show.add_argument("--server", help="only this server's grants")
    show.add_argument("--all", action="store_true", help="include revoked and expired grants")
    add = sub.add_parser("add", help="trust a destination for one tool of one server")
    add.add_argument("--server", required=True, help="server name, as in `gatewatch run --name`")
    add.add_argument("--tool", required=True)
    add.add_argument("--destination", required=True, help="e.g. alice@example.com or a URL")
    add.add_argument("--expires", metavar="DURATION", help="e.g. 24h, 7d (default: never)")
    add.add_argument("--note")
    revoke = sub.add_parser("revoke", help="revoke a grant by its id (see `trust list`)")
    revoke.add_argument("id", type=int)


def run(args: argparse.Namespace) -> int:
    from proxy import paths
    from proxy.ask.trust import parse_duration
    from proxy.store.database import Database

    store = Database.open(paths.db_path()).trust
    if args.action == "add":
        try:
            expires_at = time.time() + parse_duration(args.expires) if args.expires else None
        except ValueError as exc:
            print(f"gatewatch trust add: --expires {exc}", file=sys.stderr)
            return 2
        grant_id = store.add(
            args.server,
            args.tool,
            args.destination,
            expires_at=expires_at,
            decided_by="cli",
            note=args.note,
        )
        print(f"added grant #{grant_id}")
        return 0
    if args.action == "revoke":
        if store.revoke(args.id):
            print(f"revoked grant #{args.id}")
            return 0
        print(f"gatewatch trust revoke: no active grant #{args.id}", file=sys.stderr)
        return 1
    now = time.time()
    grants = store.list(server=args.server, include_inactive=args.all, now=now)
    if not grants:
        print("no grants")
        return 0
    print(f"{'id':>5}  {'server':<16} {'tool':<20} {'destination':<32} {'state':<10} expires")
    for g in grants:
        state = "revoked" if g.revoked_at else "active" if g.active(now) else "expired"
        expires = _when(g.expires_at) if g.expires_at else "never"
        print(f"{g.id:>5}  {g.server:<16} {g.tool:<20} {g.destination:<32} {state:<10} {expires}")
    return 0


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
