"""installer/*.sh in a throw-away HOME: the full round trip (slow: pip installs a real venv) and
uninstall's safety rules against a venv that links to this checkout's dev environment."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

INSTALLER = ROOT / "installer"


def home_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XDG_") and k not in ("GATEWATCH_HOME", "PYTHONPATH", "DISPLAY",
                                                     "WAYLAND_DISPLAY")}
    env["HOME"] = str(home)
    env["XDG_RUNTIME_DIR"] = str(home / "run")
    return env


def sh(script: str, *args: str, home: Path, stdin: str | None = None,
       timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(INSTALLER / script), *args], capture_output=True, text=True,
        env=home_env(home), input=stdin, timeout=timeout, check=False,
    )


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A HOME laid out as install.sh leaves it, its venv linking to this dev environment's
    Python and gatewatch (real executables), plus one wrapped Claude Desktop server."""
    home = tmp_path / "home"
    venv_bin = home / ".local" / "share" / "gatewatch" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    dev_bin = Path(sys.executable).parent
    # A script, not a link: a linked python outside its venv would lose the venv's packages.
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec "{dev_bin / "python"}" "$@"\n')
    (venv_bin / "python").chmod(0o755)
    (venv_bin / "gatewatch").symlink_to(dev_bin / "gatewatch")
    (home / ".local" / "bin").mkdir()
    (home / ".local" / "bin" / "gatewatch").symlink_to(venv_bin / "gatewatch")
    (home / ".local" / "share" / "gatewatch" / "gatewatch.db").write_text("")
    autostart = home / ".config" / "autostart" / "gatewatch.desktop"
    autostart.parent.mkdir(parents=True)
    autostart.write_text("[Desktop Entry]\n")
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {"echo": {
        "command": str(venv_bin / "gatewatch"),
        "args": ["run", "--name", "echo", "--", "/usr/bin/true", "--flag"]}}}))
    return home


def original_command(home: Path) -> tuple[str, list[str]]:
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    entry = json.loads(claude.read_text())["mcpServers"]["echo"]
    return entry["command"], entry["args"]


def test_uninstall_without_a_terminal_refuses_to_leave_clients_broken(installed: Path) -> None:
    done = sh("uninstall.sh", home=installed, stdin="")
    assert done.returncode == 1
    assert "Claude Desktop: echo" in done.stdout
    assert "run again with --yes" in done.stderr
    assert (installed / ".local" / "share" / "gatewatch" / "venv").is_dir()
    assert original_command(installed)[1][0] == "run"


def test_uninstall_yes_unwraps_then_removes_everything_but_data(installed: Path) -> None:
    done = sh("uninstall.sh", "--yes", home=installed)
    assert done.returncode == 0, done.stderr
    assert original_command(installed) == ("/usr/bin/true", ["--flag"])
    data = installed / ".local" / "share" / "gatewatch"
    assert not (data / "venv").exists()
    assert not (installed / ".local" / "bin" / "gatewatch").is_symlink()
    assert not (installed / ".config" / "autostart" / "gatewatch.desktop").exists()
    assert (data / "gatewatch.db").exists()
    assert Path(sys.executable).exists()  # the dev venv behind the links is untouched
    purge = sh("uninstall.sh", "--yes", "--purge", home=installed)
    assert purge.returncode == 0, purge.stderr
    assert not data.exists()


def test_uninstall_says_when_the_tray_app_is_still_running(installed: Path) -> None:
    runtime = installed / "run"  # XDG_RUNTIME_DIR: platformdirs ignores it unless private
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o700)
    sock_dir = runtime / "gatewatch"
    sock_dir.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as app:
        app.bind(str(sock_dir / "gatewatch.sock"))
        app.listen()
        done = sh("uninstall.sh", "--yes", home=installed)
    assert done.returncode == 0, done.stderr
    assert "the tray app is still running" in done.stdout


def test_uninstall_keeps_a_gatewatch_link_it_did_not_make(installed: Path) -> None:
    link = installed / ".local" / "bin" / "gatewatch"
    link.unlink()
    link.symlink_to("/usr/bin/true")
    assert sh("uninstall.sh", "--yes", home=installed).returncode == 0
    assert link.is_symlink()


def test_scripts_reject_unknown_options(tmp_path: Path) -> None:
    for script in ("install.sh", "uninstall.sh"):
        done = sh(script, "--bogus", home=tmp_path)
        assert done.returncode == 1 and "unknown option: --bogus" in done.stderr
        assert "usage:" in done.stderr
        assert sh(script, "--help", home=tmp_path).returncode == 0


def test_install_names_a_missing_python(tmp_path: Path) -> None:
    env = home_env(tmp_path) | {"PYTHON": "python-that-does-not-exist"}
    done = subprocess.run(["bash", str(INSTALLER / "install.sh"), "--no-launch"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "python-that-does-not-exist not found" in done.stderr
    assert not (tmp_path / ".local").exists()


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_ci_check_round_trip_in_a_throw_away_home() -> None:
    # install (pip, a real venv) -> wrap -> doctor -> upgrade -> uninstall -> purge
    done = subprocess.run(["bash", str(INSTALLER / "ci-check.sh")], capture_output=True,
                          text=True, timeout=880, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert done.stdout.rstrip().endswith("ci-check: OK")


# -- system packages: installer/system_packages.sh with a package manager that records its calls

FAKE_APT = """#!/bin/sh
echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}" >> "$CALLS"
case "$1" in
  update) touch "$CALLS.lists" ;;
  install) [ -e "$CALLS.lists" ] || [ -z "$NEEDS_LISTS" ] || exit 100 ;;
esac
"""
FAKE_SUDO = '#!/bin/sh\necho "sudo" >> "$CALLS"\nexec "$@"\n'
PACKAGES = ("libxcb-icccm4", "libxcb-keysyms1")


def install_packages(tmp_path: Path, mode: str, answer: str | None = None,
                     needs_lists: bool = False) -> tuple[subprocess.CompletedProcess[str], str]:
    """gw_install_system_packages apt-get PACKAGES, GW_SYSTEM_PACKAGES=mode; `answer` is typed
    on a terminal (None: no terminal)."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    for name, text in (("apt-get", FAKE_APT), ("sudo", FAKE_SUDO)):
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    calls = tmp_path / "calls"
    env = {"HOME": str(tmp_path), "PATH": f"{fake}:/usr/bin:/bin", "CALLS": str(calls),
           "GW_SYSTEM_PACKAGES": mode, "NEEDS_LISTS": "1" if needs_lists else ""}
    script = (f'. "{INSTALLER}/common.sh"; . "{INSTALLER}/system_packages.sh"; '
              f'gw_install_system_packages apt-get {" ".join(PACKAGES)}')
    if answer is None:
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60, check=False)
    else:
        import pty

        leader, follower = pty.openpty()
        os.write(leader, answer.encode() + b"\n")
        with os.fdopen(leader, "rb", buffering=0):
            done = subprocess.run(["bash", "-c", script], env=env, capture_output=True,
                                  text=True, stdin=follower, timeout=60, check=False)
        os.close(follower)
    return done, calls.read_text() if calls.exists() else ""


INSTALL_LINE = f"apt-get install -y -q {' '.join(PACKAGES)} DEBIAN_FRONTEND=noninteractive"
VIA_SUDO = os.geteuid() != 0  # root installs directly, everyone else through sudo


def test_yes_installs_the_missing_packages_without_asking(tmp_path: Path) -> None:
    done, calls = install_packages(tmp_path, "yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls.splitlines() == (["sudo"] if VIA_SUDO else []) + [INSTALL_LINE]
    assert "missing system packages: libxcb-icccm4 libxcb-keysyms1" in done.stdout


def test_a_fresh_machine_without_package_lists_gets_them_first(tmp_path: Path) -> None:
    done, calls = install_packages(tmp_path, "yes", needs_lists=True)
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line for line in calls.splitlines() if line != "sudo"]
    assert [line.split()[1] for line in ran] == ["install", "update", "install"]


def test_asking_on_the_terminal_installs_only_after_yes(tmp_path: Path) -> None:
    refused, calls = install_packages(tmp_path, "ask", answer="n")
    assert refused.returncode != 0 and calls == ""
    assert "not installed; install them with:" in refused.stdout
    agreed, calls = install_packages(tmp_path, "ask", answer="")  # Enter takes the default
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    assert INSTALL_LINE in calls.splitlines()


def test_without_a_terminal_or_with_no_nothing_is_installed_and_the_command_is_named(
    tmp_path: Path,
) -> None:
    command = ("sudo " if VIA_SUDO else "") + f"apt-get install -y -q {' '.join(PACKAGES)}"
    for mode, hint in (("ask", "run again with --yes"), ("no", "install them with:")):
        done, calls = install_packages(tmp_path, mode)
        assert done.returncode != 0 and calls == ""
        assert hint in done.stdout and command in done.stdout


def test_qt_libs_names_the_packages_for_this_machines_manager() -> None:
    from proxy.doctor import qt_libs

    plugin = qt_libs.xcb_plugin()
    assert plugin is not None
    missing = qt_libs.missing_libraries(plugin)
    out = subprocess.run([sys.executable, "-m", "proxy.doctor.qt_libs", "--packages"],
                         capture_output=True, text=True, timeout=60, check=False)
    if not missing:
        assert out.returncode == 0 and out.stdout == ""
        return
    assert out.returncode == 1
    found = qt_libs.packages_to_install(missing)
    assert found is not None, missing  # every library Qt needs here has a known package
    assert out.stdout.split() == [found[0], *found[1]]
