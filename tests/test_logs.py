"""Logging: configured once per process, on stderr, stdout left to the MCP channel."""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from proxy import logs
from tests.support import GATEWATCH, ROOT, child_env, upstream

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}}


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=child_env(env), timeout=60, check=False)


def test_configured_once_on_stderr_in_the_proxy_voice() -> None:
    done = _python(
        "import logging\n"
        "from proxy import logs\n"
        "logs.configure(); logs.configure()\n"  # a second call adds no second handler
        "logging.getLogger('proxy.relay.pumps').warning('audit write failed (%s)', 'locked')\n"
        "logging.getLogger('proxy.ipc.client').info('not shown by default')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == "gatewatch: audit write failed (locked)\n"


def test_the_level_comes_from_the_environment() -> None:
    code = ("import logging\nfrom proxy import logs\nlogs.configure()\n"
            "logging.getLogger('proxy.ipc.client').debug('app link: %s', 'refused')\n")
    assert _python(code, GATEWATCH_LOG="debug").stderr == "gatewatch: app link: refused\n"
    loud = _python(code, GATEWATCH_LOG="chatty")
    assert loud.stderr == ("gatewatch: GATEWATCH_LOG='chatty' is not one of debug, info, "
                           "warning, error; using warning\n")


def test_the_app_format_keeps_time_and_module() -> None:
    done = _python("import logging\nfrom proxy import logs\nlogs.configure('app')\n"
                   "logging.getLogger('app.hub').info('serving %s', 'gatewatch-1000')\n")
    assert done.stderr.rstrip("\n").endswith(" app.hub: serving gatewatch-1000")


def test_a_proxy_that_cannot_start_says_why_on_stderr_only() -> None:
    proc = subprocess.run(
        [*GATEWATCH, "run", "--name", "lost", "--", "no-such-command-here"],
        input=json.dumps(INIT) + "\n", capture_output=True, text=True, env=child_env(),
        timeout=60, check=False,
    )
    assert proc.returncode != 0
    answers = [json.loads(line) for line in proc.stdout.splitlines()]  # stdout: JSON-RPC only
    assert [a.get("id") for a in answers] == [1] and "no-such-command-here" in str(answers)
    said = [line for line in proc.stderr.splitlines() if "no-such-command-here" in line]
    assert said and said[0].startswith("gatewatch: "), proc.stderr


def test_a_broken_policy_is_named_on_stderr_with_file_and_line(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nservers:\n  relay_echo:\n    tools: [oops]\n")
    frames = "".join(json.dumps(m) + "\n" for m in (INIT, LIST, CALL))
    proc = subprocess.run(
        [*GATEWATCH, "run", "--name", "relay_echo", "--policy", str(policy), "--",
         *upstream("relay_echo")],
        input=frames, capture_output=True, text=True, env=child_env(), timeout=60, check=False,
    )
    answers = {m.get("id"): m for m in map(json.loads, proc.stdout.splitlines())}
    assert answers[3].get("result") != {"ok": True}, answers  # denied, never run upstream
    assert (f"gatewatch: configuration error: {policy}:4: 'tools' must be a mapping" in proc.stderr
            and "Every tool call is denied until this is fixed." in proc.stderr), proc.stderr


def test_debug_lines_of_a_running_proxy_go_to_stderr_never_into_the_mcp_stream(
    gw_home: Path,
) -> None:
    (gw_home / "run").mkdir(mode=0o700)  # a socket directory with no app in it: the link says so
    frames = "".join(json.dumps(m) + "\n" for m in (INIT, LIST, CALL))
    proc = subprocess.run(
        [*GATEWATCH, "run", "--name", "relay_echo", "--", *upstream("relay_echo")],
        input=frames, capture_output=True, text=True, env=child_env({"GATEWATCH_LOG": "debug"}),
        timeout=60, check=False,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sorted(a["id"] for a in answers) == [1, 2, 3], proc.stdout
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert "gatewatch: app link: " in proc.stderr, proc.stderr


def test_the_handler_follows_a_replaced_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """Like print, a record goes to the sys.stderr of the moment (a redirect, a capture)."""
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    logs.configure()
    try:
        logging.getLogger("proxy.gate").error("internal error in %s; failing closed", "decide")
        assert capsys.readouterr().err.endswith("gatewatch: internal error in decide; "
                                                "failing closed\n")
    finally:
        root.handlers[:] = before[0]
        root.setLevel(before[1])


def test_no_module_outside_the_commands_prints() -> None:
    """Diagnostics go through logging; print is for command output (proxy/cli, the doctor,
    the app's start-up messages)."""
    allowed = ("proxy/cli/", "proxy/doctor/", "app/main.py")
    printing = []
    for package in ("proxy", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(allowed):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "print"):
                    printing.append(f"{rel}:{node.lineno}")
    assert printing == []
