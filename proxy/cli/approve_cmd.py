"""`gatewatch approve`: answer the proxies' questions from a terminal.

It serves the same local socket as the tray app (and refuses to start while the app or another
approver serves it). Interactive by default; `--auto allow|deny|ignore` answers without a human,
for headless machines and tests (`ignore` never answers, so the proxy's deadline decides).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.ipc.server import Decide


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--auto", choices=("allow", "deny", "ignore"), help="answer every question this way"
    )
    parser.add_argument(
        "--remember",
        choices=("once", "session", "forever"),
        default="once",
        help="with --auto allow: how long the proxy remembers the answer (default once)",
    )
    parser.add_argument(
        "--expires", metavar="DURATION", help="with --remember forever: e.g. 24h (default never)"
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --auto: wait this long before answering",
    )


def run(args: argparse.Namespace) -> int:
    from proxy.ask.trust import parse_duration

    try:
        expires_in = parse_duration(args.expires) if args.expires else None
    except ValueError as exc:
        print(f"gatewatch approve: --expires {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_serve(args, expires_in))


def say(text: str) -> None:
    print(text, flush=True)


async def _serve(args: argparse.Namespace, expires_in: float | None) -> int:
    from proxy.ipc.address import SocketDirError
    from proxy.ipc.server import AlreadyServing, SocketServer

    if args.auto:
        decide = _auto(args.auto, args.remember, expires_in, args.delay)
    else:
        decide = await _Terminal.open()
    server = SocketServer(decide, on_event=_show)
    try:
        path = await server.start()
    except (AlreadyServing, SocketDirError) as exc:
        print(f"gatewatch approve: {exc}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    say(f"gatewatch approve: serving {path} (Ctrl-C to stop)")
    try:
        await stop.wait()
    finally:
        await server.close()
    return 0


def _show(kind: str, message: dict[str, Any]) -> None:
    if kind in ("hello", "gone") and message.get("role") != "proxy":
        return  # e.g. a second tray app asking the running one to show its window
    if kind == "hello":
        client = (message.get("client") or {}).get("name") or "client not known yet"
        say(f"proxy connected: {message.get('server')} (pid {message.get('pid')}, {client})")
    elif kind == "gone":
        say(f"proxy left: {message.get('server')} (pid {message.get('pid')})")
    elif kind == "ask":
        target = f" -> {message['destination']}" if message.get("destination") else ""
        say(f"ask {message['ask_id']}: {message.get('server')}.{message.get('tool')}{target}")
        say(f"  why: {message.get('reason')}")
        say(f"  arguments: {message.get('arguments_preview')}")
    elif kind == "cancel":
        say(f"withdrawn {message.get('ask_id')}: {message.get('reason')}")
    elif kind == "notice":
        say(
            f"notice: {message.get('server')}.{message.get('tool')} {message.get('verdict')}: "
            f"{message.get('reason')}"
        )


def _auto(answer: str, remember: str, expires_in: float | None, delay: float) -> Decide:
    async def decide(message: dict[str, Any]) -> dict[str, Any] | None:
        if answer == "ignore":  # hold the question open until it is withdrawn
            await asyncio.get_running_loop().create_future()
        if delay:
            await asyncio.sleep(delay)
        allow = answer == "allow"
        say(f"decided {message['ask_id']}: {answer}" + (f" ({remember})" if allow else ""))
        return {
            "allow": allow,
            "remember": remember if allow else "once",
            "expires_in_s": expires_in if allow else None,
        }

    return decide


class _Terminal:
    """Questions one at a time on stdin; a withdrawn question just stops being asked."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._turn = asyncio.Lock()

    @classmethod
    async def open(cls) -> _Terminal:
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return cls(reader)

    async def __call__(self, message: dict[str, Any]) -> dict[str, Any] | None:
        async with self._turn:
            ask_id = message["ask_id"]
            allow = await self._read(f"[{ask_id}] allow? [y/N] ") in ("y", "yes")
            if not allow:
                return {"allow": False, "remember": "once", "expires_in_s": None}
            choices = message.get("remember_choices") or ["once", "session", "forever"]
            picked = await self._read(f"[{ask_id}] remember? {'/'.join(choices)} [once] ")
            remember = next((c for c in choices if picked and c.startswith(picked)), "once")
            return {"allow": True, "remember": remember, "expires_in_s": None}

    async def _read(self, prompt: str) -> str:
        print(prompt, end="", flush=True)
        line = await self._reader.readline()
        if not line:  # stdin closed: nobody to ask, so deny
            say("(stdin closed: denying)")
            return ""
        return line.decode(errors="replace").strip().lower()
