"""`gatewatch run --health-port`: loopback GET /health, robust against slow clients."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

from tests.support import GATEWATCH, child_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def http_get(port: int, request: bytes) -> tuple[str, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), json.loads(body)


async def wait_listening(port: int, proc: asyncio.subprocess.Process) -> None:
    for _ in range(200):
        assert proc.returncode is None, "proxy exited before serving /health"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise AssertionError("health port never opened")


async def test_health_reports_upstream_and_survives_slow_client() -> None:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        *GATEWATCH,
        "run",
        "--name",
        "hc",
        "--health-port",
        str(port),
        "--",
        sys.executable,
        "-c",
        "import sys; [sys.stdout.write(l) for l in sys.stdin]",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=child_env(),
    )
    try:
        await wait_listening(port, proc)
        # A client that connects and never sends must not stop others from being answered.
        _, slow = await asyncio.open_connection("127.0.0.1", port)
        status, body = await http_get(port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == "HTTP/1.1 200 OK"
        assert body["status"] == "ok" and body["server"] == "hc" and body["upstream_alive"]
        status, _ = await http_get(port, b"POST /health HTTP/1.1\r\n\r\n")
        assert status.startswith("HTTP/1.1 405")
        status, _ = await http_get(port, b"GET /secrets HTTP/1.1\r\n\r\n")
        assert status.startswith("HTTP/1.1 404")
        slow.close()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), 15) == 0
