"""`gatewatch doctor` end to end (a real subprocess on a real GATEWATCH_HOME), and its pieces."""

from __future__ import annotations

import http.server
import json
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from proxy.doctor import qt_libs
from proxy.doctor.integrations import probe_url
from proxy.doctor.report import CheckResult, Status, render_text, worst
from proxy.store.schema import SCHEMA_VERSION
from tests.support import GATEWATCH, child_env


def doctor(env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [*GATEWATCH, "doctor", "--json"], capture_output=True, text=True, timeout=90,
        env=child_env(env), check=False,
    )
    return done.returncode, json.loads(done.stdout)


def finding(report: dict[str, Any], check: str) -> dict[str, Any]:
    found = [c for c in report["checks"] if c["check"] == check]
    assert found, f"no {check!r} line in {report}"
    return found[0]


def test_fresh_home_has_no_failures_and_creates_a_working_database(gw_home: Path) -> None:
    code, report = doctor({"QT_QPA_PLATFORM": "offscreen"})
    assert report["status"] in ("OK", "WARN")
    assert code == Status[report["status"]].value
    assert finding(report, "python")["status"] == "OK"
    db = finding(report, "database")
    assert db["status"] == "OK" and f"schema v{SCHEMA_VERSION}" in db["summary"]
    assert (gw_home / "data" / "gatewatch.db").exists()
    assert finding(report, "socket-dir")["status"] == "OK"


def test_text_output_is_one_line_per_check_and_exit_code_is_the_worst(gw_home: Path) -> None:
    (gw_home / "run").mkdir(mode=0o755)
    (gw_home / "run").chmod(0o755)
    done = subprocess.run(
        [*GATEWATCH, "doctor"], capture_output=True, text=True, timeout=90,
        env=child_env({"QT_QPA_PLATFORM": "offscreen"}), check=False,
    )
    assert done.returncode == 2
    lines = [ln for ln in done.stdout.splitlines() if ln[:4] in ("OK  ", "WARN", "FAIL")]
    checks = [ln.split()[1] for ln in lines]
    assert {"python", "database", "socket-dir", "keyring"} <= set(checks)
    assert f"chmod 700 {gw_home / 'run'}" in done.stdout


def test_group_readable_socket_dir_fails(gw_home: Path) -> None:
    run = gw_home / "run"
    run.mkdir()
    run.chmod(0o750)
    code, report = doctor()
    assert code == 2
    line = finding(report, "socket-dir")
    assert line["status"] == "FAIL" and "mode 750" in line["summary"]


def test_socket_dir_reports_a_running_app_and_a_stale_socket(gw_home: Path) -> None:
    run = gw_home / "run"
    run.mkdir(mode=0o700)
    path = str(run / "gatewatch.sock")
    with socket.socket(socket.AF_UNIX) as app:
        app.bind(path)
        app.listen()
        _, report = doctor()
        assert finding(report, "socket-dir")["summary"].endswith("tray app running")
    # The listener is gone but its file stays, as after a crash.
    _, report = doctor()
    assert "stale socket file" in finding(report, "socket-dir")["summary"]


def test_too_long_socket_path_fails(tmp_path: Path) -> None:
    home = tmp_path / ("deep" * 30)
    home.mkdir()
    code, report = doctor({"GATEWATCH_HOME": str(home)})
    line = finding(report, "socket-dir")
    assert code == 2 and "longer than" in line["summary"]


def test_private_socket_dir_passes(gw_home: Path) -> None:
    (gw_home / "run").mkdir(mode=0o700)
    _, report = doctor()
    line = finding(report, "socket-dir")
    assert line["status"] == "OK" and "0700" in line["summary"]


def test_damaged_database_fails_naming_the_file(gw_home: Path) -> None:
    db = gw_home / "data" / "gatewatch.db"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database" * 100)
    code, report = doctor()
    assert code == 2
    line = finding(report, "database")
    assert line["status"] == "FAIL" and str(db) in line["summary"]


def test_database_from_a_newer_gatewatch_fails_with_upgrade_hint(gw_home: Path) -> None:
    db = gw_home / "data" / "gatewatch.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    code, report = doctor()
    line = finding(report, "database")
    assert code == 2 and line["status"] == "FAIL"
    assert "newer" in line["summary"] and line["hint"] == "upgrade Gatewatch"


def test_malformed_settings_fail_with_file_and_line(gw_home: Path) -> None:
    settings = gw_home / "config" / "settings.yaml"
    settings.parent.mkdir()
    settings.write_text("ask_timeout: 120\nno_such_setting: 1\n")
    code, report = doctor()
    line = finding(report, "settings")
    assert code == 2 and line["status"] == "FAIL"
    assert f"{settings}:2" in line["summary"]


def test_qt_offscreen_loads_but_has_no_tray() -> None:
    _, report = doctor({"QT_QPA_PLATFORM": "offscreen"})
    assert finding(report, "qt")["status"] == "OK"
    assert "offscreen" in finding(report, "qt")["summary"]
    assert finding(report, "tray")["status"] == "WARN"


def test_a_qt_that_cannot_start_is_a_failure_not_a_crash() -> None:
    code, report = doctor({"QT_QPA_PLATFORM": "no-such-platform"})
    line = finding(report, "qt")
    assert code == 2 and line["status"] == "FAIL"
    assert "no-such-platform" in line["summary"]


def test_headless_session_only_warns(gw_home: Path) -> None:
    env = child_env()
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(name, None)
    done = subprocess.run(
        [*GATEWATCH, "doctor", "--json"], capture_output=True, text=True, timeout=90, env=env,
        check=False,
    )
    report = json.loads(done.stdout)
    assert finding(report, "qt")["status"] == "WARN"
    assert "graphical session" in finding(report, "qt")["summary"]


# --- pieces -------------------------------------------------------------------------------


def test_worst_status_orders_fail_over_warn_over_ok() -> None:
    ok = CheckResult("a", Status.OK, "fine")
    warn = CheckResult("b", Status.WARN, "hmm", "do this")
    fail = CheckResult("c", Status.FAIL, "broken", "do that")
    assert worst([]) is Status.OK
    assert worst([ok, warn]) is Status.WARN
    assert worst([fail, ok, warn]) is Status.FAIL
    text = render_text([ok, warn, fail])
    assert "-> do this" in text and text.endswith("1 OK, 1 WARN, 1 FAIL")


def test_missing_qt_libraries_map_to_packages_for_each_manager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(qt_libs.shutil, "which", lambda name: None)  # no manager found: all
    commands = qt_libs.install_commands(["libxcb-cursor.so.0", "libEGL.so.1", "libfoo.so.9"])
    assert "sudo apt-get install libegl1 libxcb-cursor0" in commands
    assert "sudo dnf install libglvnd-egl xcb-util-cursor" in commands
    assert "sudo pacman -S libglvnd xcb-util-cursor" in commands
    assert commands[-1] == "and a package providing: libfoo.so.9"


def test_only_the_package_manager_present_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qt_libs.shutil, "which", lambda name: "/usr/bin/dnf" if name == "dnf"
                        else None)
    assert qt_libs.install_commands(["libxkbcommon-x11.so.0"]) == [
        "sudo dnf install libxkbcommon-x11"
    ]


class FakeOllama(http.server.BaseHTTPRequestHandler):
    models: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        if self.path != "/api/tags":
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps({"models": [{"name": m} for m in self.models]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def ollama() -> Iterator[tuple[str, type[FakeOllama]]]:
    handler = type("Handler", (FakeOllama,), {"models": []})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def _classifier_on(gw_home: Path, url: str) -> None:
    config = gw_home / "config" / "detector.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"classifier:\n  enabled: true\n  url: {url}\n  model: qwen2.5:3b\n")


def test_enabled_classifier_is_probed_for_its_model(
    gw_home: Path, ollama: tuple[str, type[FakeOllama]]
) -> None:
    url, handler = ollama
    _classifier_on(gw_home, url)
    handler.models = ["llama3:8b"]
    _, report = doctor()
    line = finding(report, "classifier")
    assert line["status"] == "WARN" and line["hint"] == "ollama pull qwen2.5:3b"
    handler.models = ["qwen2.5:3b"]
    _, report = doctor()
    line = finding(report, "classifier")
    assert line["status"] == "OK" and f"{url} reachable" in line["summary"]


def test_enabled_classifier_that_is_down_warns(gw_home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _classifier_on(gw_home, f"http://127.0.0.1:{port}")
    _, report = doctor()
    line = finding(report, "classifier")
    assert line["status"] == "WARN" and "unreachable" in line["summary"]


def test_broken_rule_pack_fails_with_file_and_line(gw_home: Path, tmp_path: Path) -> None:
    pack = tmp_path / "mine.yaml"
    pack.write_text("pack: mine\nrules:\n  - id: x\n    pattern: '(unclosed'\n")
    config = gw_home / "config" / "detector.yaml"
    config.parent.mkdir()
    config.write_text(f"rule_packs: [{pack}]\n")
    code, report = doctor()
    line = finding(report, "rule-packs")
    assert code == 2 and line["status"] == "FAIL" and str(pack) in line["summary"]


def test_built_in_packs_and_user_policy_are_validated(gw_home: Path) -> None:
    _, report = doctor()
    assert finding(report, "rule-packs")["status"] == "OK"
    assert finding(report, "server-packs")["status"] == "OK"
    policy = gw_home / "config" / "policy.yaml"
    policy.parent.mkdir()
    policy.write_text("servers:\n  fs:\n    tools:\n      write_file: {max_calls: many}\n")
    code, report = doctor()
    line = finding(report, "policy")
    assert code == 2 and line["status"] == "FAIL" and f"{policy}:4" in line["summary"]
    policy.write_text("servers:\n  fs:\n    pack: no-such-pack\n")
    code, report = doctor()
    line = finding(report, "policy")
    assert code == 2 and line["status"] == "FAIL" and "fs -> no-such-pack" in line["summary"]
    policy.write_text("servers:\n  fs:\n    pack: filesystem\n")
    assert finding(doctor()[1], "policy")["status"] == "OK"


@pytest.fixture
def http_server() -> Iterator[str]:
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/tags"
    server.shutdown()
    server.server_close()


def test_classifier_probe_reaches_a_live_server(http_server: str) -> None:
    assert probe_url(http_server) is None


def test_classifier_probe_reports_a_closed_port() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert probe_url(f"http://127.0.0.1:{port}/", timeout_s=2) is not None
    assert probe_url("ftp://example.invalid/") == "not an http(s) URL: 'ftp://example.invalid/'"


def test_wrapped_client_servers_that_cannot_start_fail(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    gatewatch = Path(sys.executable).parent / "gatewatch"
    servers = {
        "plain": {"command": sys.executable, "args": ["-c", "pass"]},
        "moved": {"command": str(tmp_path / "gone" / "gatewatch"),
                  "args": ["run", "--name", "moved", "--", sys.executable]},
        "lost": {"command": str(gatewatch),
                 "args": ["run", "--name", "lost", "--", "no-such-command-here"]},
        "fine": {"command": str(gatewatch),
                 "args": ["run", "--name", "fine", "--", sys.executable, "-c", "pass"]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    code, report = doctor(env)
    lines = [c for c in report["checks"] if c["check"] == "clients"]
    summaries = "\n".join(c["summary"] for c in lines)
    assert code == 2
    assert f"Claude Desktop {config}: 3 of 4 servers wrapped" in summaries
    failed = {c["summary"].split(": ")[1] for c in lines if c["status"] == "FAIL"}
    assert failed == {"moved", "lost"}
    assert "does not exist" in summaries and "'no-such-command-here' is not on PATH" in summaries


def test_a_codex_server_wrapped_without_env_vars_is_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    gatewatch = Path(sys.executable).parent / "gatewatch"
    # As an older Gatewatch wrapped it: no `env_vars`, so Codex strips XDG_* and GATEWATCH_HOME.
    config.write_text(f'[mcp_servers.old]\ncommand = "{gatewatch}"\n'
                      f'args = ["run", "--name", "old", "--", "{sys.executable}"]\n')
    _, report = doctor({"HOME": str(home)})
    warned = [c for c in report["checks"] if c["check"] == "clients" and c["status"] == "WARN"]
    assert [c["summary"].split(": ")[1] for c in warned] == ["old"]
    assert warned[0]["hint"] == "run `gatewatch wrap codex` again"
    # Wrapped again, the warning is gone.
    subprocess.run([str(gatewatch), "wrap", "codex", "--yes"], env=child_env({"HOME": str(home)}),
                   capture_output=True, timeout=60, check=True)
    assert "env_vars = [" in config.read_text()
    _, report = doctor({"HOME": str(home)})
    assert not [c for c in report["checks"] if c["check"] == "clients" and c["status"] == "WARN"]
