"""Start the real MCP server and end it without leaving orphans.

The upstream runs with exec semantics (never a shell), in its own process group so that an
`npx` wrapper and the node process it starts end together. On Linux it also gets
PR_SET_PDEATHSIG, so it is told to stop even when the proxy is killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping

from proxy.errors import GatewatchError

TERM_GRACE = 2.0  # after closing stdin, before SIGTERM
KILL_GRACE = 3.0  # after SIGTERM, before SIGKILL
EXIT_POLL = 0.05


class UpstreamStartError(GatewatchError, RuntimeError):
    """The upstream could not be started; `exit_code` is what the proxy exits with."""

    def __init__(self, message: str, exit_code: int = 126) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _linux_pdeathsig() -> None:  # runs in the child between fork and exec
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


async def spawn(
    argv: list[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> asyncio.subprocess.Process:
    kwargs: dict = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
        if sys.platform.startswith("linux"):
            kwargs["preexec_fn"] = _linux_pdeathsig
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # the upstream's stderr goes straight to ours (the client's log)
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=1 << 20,
            **kwargs,
        )
    except (OSError, ValueError, subprocess_error()) as exc:
        # 127 and 126 are what a shell reports for "not found" and "cannot execute".
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        raise UpstreamStartError(describe_start_error(argv, exc), code) from exc


def subprocess_error() -> type[BaseException]:
    import subprocess

    return subprocess.SubprocessError


def describe_start_error(argv: list[str], exc: BaseException) -> str:
    cmd = argv[0] if argv else "(empty command)"
    if isinstance(exc, FileNotFoundError):
        return (
            f"cannot start upstream {cmd!r}: command not found. Use an absolute path, or check "
            "that it is installed and on the PATH your MCP client gives its servers"
        )
    if isinstance(exc, PermissionError):
        return f"cannot start upstream {cmd!r}: permission denied (is it executable?)"
    return f"cannot start upstream {cmd!r}: {exc}"


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


async def exited(proc: asyncio.subprocess.Process) -> int:
    """The return code, as soon as the process itself has exited.

    asyncio's `wait()` also waits until the stdio pipes close, and a grandchild that inherited
    them (a helper the server started) keeps them open: the proxy would never notice the exit.
    """
    while proc.returncode is None:
        await asyncio.sleep(EXIT_POLL)
    return proc.returncode


async def stop(proc: asyncio.subprocess.Process, *, close_stdin: bool = True) -> int:
    """Close stdin, then SIGTERM, then SIGKILL the process group; return the exit code."""
    if close_stdin and proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    for sig, grace in ((None, TERM_GRACE), (signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        if proc.returncode is not None:
            break
        if sig is not None:
            _signal_group(proc, sig)
        try:
            await asyncio.wait_for(exited(proc), grace)
        except TimeoutError:
            continue
    if proc.returncode is None:
        await exited(proc)
    # Whatever the leader did, take the rest of its group with it.
    _signal_group(proc, signal.SIGKILL)
    return exit_code(proc.returncode)


def exit_code(returncode: int | None) -> int:
    if returncode is None:
        return 1
    return 128 - returncode if returncode < 0 else returncode
