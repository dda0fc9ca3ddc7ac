"""The engine- and detector-backed tools of `gatewatch serve`, as plain functions."""

from __future__ import annotations

from typing import Any

from proxy.serve.parts import require


def check_verdict(
    server: str, tool: str, arguments: dict[str, Any], untrusted_context: list[str],
    policy_yaml: str | None,
) -> dict[str, Any]:
    require("proxy.engine", "Engine", "load_policy", "PolicyError")
    raise NotImplementedError


def verify_policy(policy_yaml: str) -> dict[str, Any]:
    require("proxy.engine", "load_policy", "PolicyError")
    raise NotImplementedError


def list_policies(pack: str | None) -> dict[str, Any]:
    require("proxy.engine", "load_policy", "PolicyError")
    raise NotImplementedError


def detect_injection(text: str) -> dict[str, Any]:
    require("proxy.detector", "load_detector", "PackError")
    raise NotImplementedError
