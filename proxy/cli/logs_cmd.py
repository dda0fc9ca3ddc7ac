"""`gatewatch logs`: the audit log as a table (or JSON lines), optionally following new rows."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

from proxy.cli.output import paint, use_colour, verdict_colour
from proxy.store.database import Database
from proxy.store.queries import EventFilter
from proxy.store.sessions import Sessions

ARROWS = {
    "c2s": "→",  # client to server
    "s2c": "←",  # server to client
    "gw2c": "⇠",  # Gatewatch answered the client itself
    "c2gw": "⇢",  # the client answered Gatewatch
    "gw2s": "⇢",
    "gw": "•",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tail", type=int, default=50, metavar="N", help="last N rows (50)")
    parser.add_argument("--follow", "-f", action="store_true", help="keep printing new rows")
    parser.add_argument("--server", help="only this server")
    parser.add_argument("--verdict", help="allow, deny, ask, pass, warn or block")
    parser.add_argument("--method", help="e.g. tools/call")
    parser.add_argument("--tool", help="only this tool")
    parser.add_argument("--trace", help="the row with this trace id (from a blocked result)")
    parser.add_argument("--grep", help="substring of reason, tool, method or payload")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--payload", action="store_true", help="show the (redacted) payload")
    parser.add_argument("--db", type=Path, help="audit database (default: per-user data dir)")


def open_db(path: Path | None) -> Database | None:
    from proxy import paths

    db = path or paths.db_path()
    if not db.exists():
        print(f"no audit log yet at {db}: nothing has run through Gatewatch", file=sys.stderr)
        return None
    return Database.open(db)


def run(args: argparse.Namespace) -> int:
    db = open_db(args.db)
    if db is None:
        return 0 if not args.follow else 1
    flt = EventFilter(
        server=args.server,
        verdict=args.verdict,
        method=args.method,
        tool=args.tool,
        trace_id=args.trace,
        text=args.grep or "",
    )
    colour = use_colour() and not args.json
    clients = Clients(db.sessions)
    rows = db.events.tail(flt, args.tail)
    last_id = rows[-1]["id"] if rows else db.events.max_id()
    for row in rows:
        client = clients.of(row, rows)
        print(_line(row, client, colour, args.payload) if not args.json else _json(row, client),
              flush=False)
    sys.stdout.flush()
    while args.follow:
        time.sleep(0.5)
        new = db.events.after(flt, last_id)
        for row in new:
            client = clients.of(row, new)
            print(_line(row, client, colour, args.payload) if not args.json else _json(row, client))
            last_id = row["id"]
        if new:
            sys.stdout.flush()
    return 0


class Clients:
    """Which client each session belongs to, looked up once per batch of rows (a session's
    client is known from its first request on, so unknown ones are asked again later)."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self.known: dict[str, str] = {}

    def of(self, row: sqlite3.Row, batch: list[sqlite3.Row]) -> str:
        session = row["session_id"]
        if session not in self.known:
            wanted = {r["session_id"] for r in batch} - set(self.known)
            self.known.update(self.sessions.clients(wanted))
        return self.known.get(session, "")


def _json(row: sqlite3.Row, client: str) -> str:
    out = dict(row)
    out["client"] = client or None
    if out.get("detail"):
        out["detail"] = json.loads(out["detail"])
    return json.dumps(out, ensure_ascii=False)


def _line(row: sqlite3.Row, client: str, colour: bool, payload: bool) -> str:
    stamp = (
        time.strftime("%H:%M:%S", time.localtime(row["ts"])) + f".{int(row['ts'] % 1 * 1000):03d}"
    )
    arrow = ARROWS.get(row["direction"], "?")
    what = row["method"] or row["kind"]
    if row["tool"]:
        what += f" {row['tool']}"
    if row["method"] and row["kind"] not in ("request", "response", "notification"):
        what += f" [{row['kind']}]"
    verdict = row["verdict"] or ""
    notes = []
    if row["latency_ms"] is not None:
        notes.append(f"{row['latency_ms']:.1f} ms")
    notes.append(_size(row["size"]))
    if row["reason"]:
        notes.append(row["reason"])
    if row["trace_id"]:
        notes.append(f"trace {row['trace_id']}")
    line = (
        f"{paint(stamp, 'dim', colour)} {row['server'][:14]:<14} "
        f"{paint(f'{client[:20]:<20}', 'dim', colour)} {arrow} "
        f"{paint(f'{verdict:<5}', verdict_colour(verdict), colour)} "
        f"{what[:44]:<44} id={row['rpc_id'] or '-':<6} {paint(' · '.join(notes), 'dim', colour)}"
    )
    if payload and row["payload"]:
        line += "\n    " + row["payload"][:2000]
    return line


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"
