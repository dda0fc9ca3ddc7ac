"""`gatewatch run --health-port N`: a loopback-only `GET /health` for process supervisors.

Bound to 127.0.0.1 only. Each connection gets a short deadline and a small request budget, so
a slow or hostile client cannot hold the listener or grow memory (slowloris).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from proxy.errors import InvalidValue

READ_DEADLINE = 2.0
MAX_REQUEST = 8192
MAX_CLIENTS = 16


async def serve_health(port: int, status: Callable[[], dict[str, Any]]) -> asyncio.Server:
    busy = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal busy
        if busy >= MAX_CLIENTS:
            writer.close()
            return
        busy += 1
        try:
            head = await asyncio.wait_for(_read_head(reader), READ_DEADLINE)
            code, body = _answer(head, status)
            payload = json.dumps(body).encode()
            writer.write(
                f"HTTP/1.1 {code}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                + payload
            )
            await asyncio.wait_for(writer.drain(), READ_DEADLINE)
        except (TimeoutError, ConnectionError, ValueError):
            pass
        finally:
            busy -= 1
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", port, limit=MAX_REQUEST)


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and b"\n\n" not in data:
        chunk = await reader.read(1024)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise InvalidValue("request too large")
    return data


def _answer(head: bytes, status: Callable[[], dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    first = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0].split()
    if len(first) < 2 or first[0] != b"GET":
        return "405 Method Not Allowed", {"error": "only GET /health"}
    if first[1].split(b"?", 1)[0] != b"/health":
        return "404 Not Found", {"error": "only GET /health"}
    body = status()
    return ("200 OK" if body.get("status") == "ok" else "503 Service Unavailable"), body


def session_status(session: Any, upstream_alive: Callable[[], bool]) -> dict[str, Any]:
    alive = upstream_alive()
    return {
        "status": "ok" if alive else "down",
        "server": session.server,
        "session_id": session.id,
        "upstream_pid": session.upstream_pid,
        "upstream_alive": alive,
        "uptime_s": round(time.time() - session.started_at, 1),
        "calls": session.calls,
        "denied": session.denied,
        "era": session.era,
    }
