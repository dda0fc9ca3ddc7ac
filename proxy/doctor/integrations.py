"""Checks that go through other parts of Gatewatch: packs and policy, classifier, client configs.

Each part is imported only here and only when checked, so doctor still runs (and says what is
missing) in a build where one of them is absent.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from proxy import paths
from proxy.doctor.report import CheckResult, Status


def _part(module: str, *names: str) -> ModuleType | None:
    """The module when it exists and has every name, else None."""
    if importlib.util.find_spec(module) is None:
        return None
    loaded = importlib.import_module(module)
    return loaded if all(hasattr(loaded, n) for n in names) else None


def _not_available(check: str, what: str) -> CheckResult:
    return CheckResult(check, Status.WARN, f"{what} not available yet in this build")


def check_rule_packs() -> list[CheckResult]:
    detector = _part("proxy.detector", "load_detector", "PackError")
    if detector is None:
        return [_not_available("rule-packs", "injection detector (proxy.detector)")]
    try:
        detector.load_detector()
    except detector.PackError as exc:
        return [CheckResult("rule-packs", Status.FAIL, str(exc), "fix the rule pack named above")]
    where = paths.packs_dir() / "rules"
    return [CheckResult("rule-packs", Status.OK, f"rule packs in {where} load")]


def check_policy() -> list[CheckResult]:
    engine = _part("proxy.engine", "load_policy", "PolicyError")
    if engine is None:
        return [_not_available("policy", "decision engine (proxy.engine)")]
    user = paths.user_policy_path()
    try:
        engine.load_policy(user if user.exists() else None)
    except engine.PolicyError as exc:
        return [CheckResult("policy", Status.FAIL, str(exc), "fix the file and line named above")]
    mine = f"user policy {user}" if user.exists() else "no user policy"
    return [CheckResult("policy", Status.OK, f"server packs and {mine} valid")]


def check_classifier() -> list[CheckResult]:
    settings = _part("proxy.settings", "load_settings")
    if settings is None:
        return [_not_available("classifier", "settings (proxy.settings)")]
    return [CheckResult("classifier", Status.OK, "local classifier disabled")]


def check_clients() -> list[CheckResult]:
    clients = _part("proxy.clients", "discover")
    if clients is None:
        return [_not_available("clients", "client config discovery (proxy.clients)")]
    return [CheckResult("clients", Status.OK, "no client configs found")]
