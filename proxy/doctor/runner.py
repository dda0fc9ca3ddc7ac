"""Runs every doctor check in order; a check that raises is reported, never fatal."""

from __future__ import annotations

from collections.abc import Callable

from proxy.doctor import environment, integrations, state
from proxy.doctor.report import CheckResult, Status

Check = Callable[[], list[CheckResult]]

CHECKS: list[tuple[str, Check]] = [
    ("python", environment.check_python),
    ("qt-libs", environment.check_qt_libraries),
    ("qt", environment.check_qt_platform),
    ("database", state.check_database),
    ("rule-packs", integrations.check_rule_packs),
    ("policy", integrations.check_policy),
    ("settings", integrations.check_settings),
    ("socket-dir", state.check_socket_dir),
    ("keyring", environment.check_keyring),
    ("native", integrations.check_native),
    ("classifier", integrations.check_classifier),
    ("clients", integrations.check_clients),
]


def run_all() -> list[CheckResult]:
    results: list[CheckResult] = []
    for name, check in CHECKS:
        try:
            results.extend(check())
        except Exception as exc:  # a broken check is a finding, not a crash
            results.append(
                CheckResult(name, Status.FAIL, f"check crashed: {type(exc).__name__}: {exc}",
                            "please report this with the output of `gatewatch version`")
            )
    return results
