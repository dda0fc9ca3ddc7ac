"""`gatewatch stats`: what went through Gatewatch, by server, method and verdict."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from proxy.cli.logs_cmd import open_db
from proxy.store.queries import EventFilter


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", help="only this server")
    parser.add_argument("--since", type=float, metavar="HOURS", help="only the last HOURS hours")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--db", type=Path, help="audit database (default: per-user data dir)")


def run(args: argparse.Namespace) -> int:
    db = open_db(args.db)
    if db is None:
        return 0
    events = db.events
    flt = EventFilter(
        server=args.server, since=time.time() - args.since * 3600 if args.since else None
    )
    calls = replace(flt, method="tools/call")
    total = events.count(flt)
    report = {
        "schema": 1,
        "events": total,
        "by_server": {r["key"]: r["n"] for r in events.counts("server", flt)},
        "by_method": {r["key"]: r["n"] for r in events.counts("method", flt)},
        "by_verdict": {r["key"]: r["n"] for r in events.counts("verdict", flt)},
        "top_tools": {r["key"]: r["n"] for r in events.counts("tool", calls, limit=10)},
        "latency_ms": events.latency_percentiles(flt),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{total} events in the audit log" + (f" for {args.server}" if args.server else ""))
    for title, key in (
        ("by server", "by_server"),
        ("by method", "by_method"),
        ("by verdict", "by_verdict"),
        ("top tools (tools/call rows)", "top_tools"),
    ):
        section = report[key]
        assert isinstance(section, dict)
        if not section:
            continue
        print(f"\n{title}:")
        width = max(len(str(k)) for k in section)
        for name, n in section.items():
            print(f"  {name:<{width}}  {n:>8}")
    lat = report["latency_ms"]
    assert isinstance(lat, dict)
    if lat.get("p50") is not None:
        print(f"\nlatency (request → response): p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    return 0
