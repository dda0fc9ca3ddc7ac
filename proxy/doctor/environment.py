"""Checks of the machine: Python, Qt and the system tray, the keyring backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from proxy.doctor import qt_libs
from proxy.doctor.report import CheckResult, Status

MIN_PYTHON = (3, 11)
QT_PROBE_TIMEOUT_S = 20.0
# Run by path, not with -m, so a `proxy` package in the working directory cannot shadow ours.
QT_PROBE = Path(__file__).with_name("qt_probe.py")


def check_python() -> list[CheckResult]:
    version = ".".join(map(str, sys.version_info[:3]))
    where = f"{version} at {sys.executable}"
    if sys.version_info[:2] < MIN_PYTHON:
        return [CheckResult("python", Status.FAIL, where, "Gatewatch needs Python 3.11 or newer")]
    return [CheckResult("python", Status.OK, where)]


def _has_display() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    if os.environ.get("QT_QPA_PLATFORM"):
        return True  # the user chose a platform (e.g. offscreen): let Qt try it
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _uses_xcb() -> bool:
    chosen = os.environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.startswith("xcb")
    return bool(os.environ.get("DISPLAY")) and not os.environ.get("WAYLAND_DISPLAY")


def check_qt_libraries() -> list[CheckResult]:
    if not sys.platform.startswith("linux"):
        return []
    plugin = qt_libs.xcb_plugin()
    if plugin is None:
        return [
            CheckResult(
                "qt-libs", Status.FAIL, "PySide6's xcb platform plugin is missing",
                "reinstall Gatewatch: installer/install.sh",
            )
        ]
    missing = qt_libs.missing_libraries(plugin)
    if not missing:
        return [CheckResult("qt-libs", Status.OK, "system libraries for Qt's xcb platform found")]
    # Only an X11 session needs them; elsewhere the tray app uses another platform plugin.
    status = Status.FAIL if _uses_xcb() else Status.WARN
    return [
        CheckResult(
            "qt-libs", status, f"missing system libraries: {', '.join(missing)}",
            "install them: " + "; or ".join(qt_libs.install_commands(missing)),
        )
    ]


def check_qt_platform() -> list[CheckResult]:
    if not _has_display():
        return [
            CheckResult(
                "qt", Status.WARN, "no graphical session (DISPLAY and WAYLAND_DISPLAY unset)",
                "the tray app needs a desktop session; proxies work without it",
            )
        ]
    try:
        done = subprocess.run(
            [sys.executable, str(QT_PROBE)],
            capture_output=True, text=True, timeout=QT_PROBE_TIMEOUT_S, check=False,
        )
    except subprocess.TimeoutExpired:
        return [
            CheckResult(
                "qt", Status.FAIL, f"Qt did not start within {QT_PROBE_TIMEOUT_S:.0f} s",
                "run `QT_DEBUG_PLUGINS=1 gatewatch` to see where Qt hangs",
            )
        ]
    if done.returncode != 0:
        last = _qt_complaint(done.stderr)
        return [
            CheckResult(
                "qt", Status.FAIL, f"Qt platform plugin failed to load: {last or done.returncode}",
                "see the qt-libs line; `QT_DEBUG_PLUGINS=1 gatewatch` shows the details",
            )
        ]
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    platform = f"Qt {probe['qt']}, platform {probe['platform']}"
    results = [CheckResult("qt", Status.OK, f"{platform} loads")]
    if probe["tray"]:
        results.append(CheckResult("tray", Status.OK, "system tray available"))
    else:
        results.append(
            CheckResult(
                "tray", Status.WARN, f"no system tray on platform {probe['platform']}",
                "on GNOME install the AppIndicator extension; approvals still pop up as dialogs",
            )
        )
    return results


def _qt_complaint(stderr: str) -> str:
    """Qt's own last word on why no platform plugin loaded, else the last line it printed."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    qpa = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("qt.qpa")]
    return (qpa or lines or [""])[-1]


def check_keyring() -> list[CheckResult]:
    # The same judgement `gatewatch wrap --secrets-to-keyring` makes (session bus included).
    from proxy.clients.secrets import backend

    found = backend()
    hint = "install and unlock a Secret Service provider (e.g. gnome-keyring or KWallet)"
    if not found.usable:
        return [CheckResult("keyring", Status.WARN, f"no usable keyring backend ({found.label})",
                            hint)]
    if found.plaintext:
        return [CheckResult("keyring", Status.WARN,
                            f"backend {found.label} keeps secrets unencrypted in {found.file}",
                            hint)]
    return [CheckResult("keyring", Status.OK, f"backend {found.label}")]
