"""Helpers for tests: where the real MCP servers are and how to launch Gatewatch."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"
UPSTREAMS = ROOT / "tests" / "upstreams"

# `gatewatch` as a subprocess, the way a client launches it (no reliance on PATH): the console
# script's entry point, app.launcher.
GATEWATCH = [sys.executable, "-m", "app"]


def npm_server(name: str) -> str:
    """Path of an npm reference server installed by tests/run.sh (never downloaded at run time)."""
    path = NPM_BIN / f"mcp-server-{name}"
    if not path.exists():
        pytest.fail(
            f"{path} is missing: run `bash tests/run.sh` (it installs the npm reference servers)"
        )
    return str(path)


def upstream(name: str) -> list[str]:
    """Command line of a small upstream written with the mcp SDK, under tests/upstreams/."""
    return [sys.executable, str(UPSTREAMS / f"{name}.py")]


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for subprocesses: this test's GATEWATCH_HOME and the repo on sys.path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if extra:
        env.update(extra)
    return env


class Approver:
    """`gatewatch approve ARGS` as a real process; `wait_for` waits on a line it printed."""

    def __init__(self, *args: str) -> None:
        import subprocess
        import threading

        self.proc = subprocess.Popen(
            [*GATEWATCH, "approve", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=child_env(), text=True,
        )
        self.lines: list[str] = []
        self._seen = threading.Condition()
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()

    def wait_for(self, prefix: str, timeout: float = 20.0, count: int = 1) -> list[str]:
        def hits() -> list[str]:
            return [line for line in self.lines if line.startswith(prefix)]

        with self._seen:
            if not self._seen.wait_for(lambda: len(hits()) >= count, timeout):
                pytest.fail(f"approver never printed {prefix!r}; it printed {self.lines}")
            return hits()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def serve(approvers: list[Approver], *args: str) -> Approver:
    """Start `gatewatch approve ARGS` and wait until it serves the socket; `approvers` (the
    fixture of that name) stops it after the test."""
    approver = Approver(*args)
    approvers.append(approver)
    approver.wait_for("gatewatch approve: serving")
    return approver


async def call(client: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """A tools/call through an SDK client: (is_error, the text of the result)."""
    result = await client.call_tool(tool, args)
    return bool(result.is_error), "".join(getattr(b, "text", "") for b in result.content)


def audited(db: Path, tool: str) -> list[tuple[str, str]]:
    """(verdict, contract) of each audited request for `tool`, oldest first."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT verdict, contract FROM events WHERE tool = ? AND direction = 'c2s' "
            "AND kind = 'request' ORDER BY id", (tool,)).fetchall()
    finally:
        conn.close()
