"""Drive `gatewatch run` over raw pipes, and read its audit log, for the relay tests."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tests.support import GATEWATCH, child_env, upstream

T = TypeVar("T")
WAIT = 20.0  # generous: the machine is shared, and every wait ends as soon as its condition holds


def echo_upstream(*args: str) -> list[str]:
    return [*upstream("relay_echo"), *args]


class RawProxy:
    """`gatewatch run` as a subprocess whose stdin/stdout the test holds directly."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stderr = b""
        self.notifications: list[Any] = []  # skipped by request() while it waits for its answer
        self._stderr_task = asyncio.create_task(self._collect_stderr())

    @classmethod
    async def start(
        cls, db: Path, command: list[str], *opts: str, name: str = "raw",
        env: dict[str, str] | None = None,
    ) -> RawProxy:
        proc = await asyncio.create_subprocess_exec(
            *GATEWATCH,
            "run",
            "--name",
            name,
            "--db",
            str(db),
            *opts,
            "--",
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=child_env(env),
            limit=1 << 26,
        )
        return cls(proc)

    async def _collect_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = await self.proc.stderr.read()

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, msg: Any) -> None:
        await self.send_raw(json.dumps(msg).encode() + b"\n")

    async def recv_line(self, timeout: float = WAIT) -> bytes:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, f"proxy closed its stdout; stderr: {self.stderr.decode(errors='replace')}"
        return line

    async def recv(self, timeout: float = WAIT) -> Any:
        return json.loads(await self.recv_line(timeout))

    async def request(self, rpc_id: Any, method: str, params: Any = None) -> Any:
        """Send a request and return its answer (notifications in between are skipped)."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        while True:
            answer = await self.recv()
            if isinstance(answer, dict) and "method" not in answer:
                assert answer.get("id") == rpc_id, answer
                return answer
            self.notifications.append(answer)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def wait(self, timeout: float = WAIT) -> int:
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.wait_for(self._stderr_task, timeout)
        return code

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.wait()


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def events(db: Path) -> list[dict[str, Any]]:
    return [dict(row) for row in query(db, "SELECT * FROM events ORDER BY id")]


async def wait_for(check: Callable[[], T], timeout: float = WAIT, what: str = "") -> T:
    """Poll `check` until it returns something truthy (the condition, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a reaped-later child still counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
