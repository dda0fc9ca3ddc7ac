"""The engine- and detector-backed tools of `gatewatch serve`, as plain functions.

A hypothetical verdict is proxy.checking's, as `gatewatch check` gives it: it never touches the
user's audit log. Packs and the detector are cached until one of their files changes
(proxy.serve.fresh).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proxy import paths
from proxy.errors import InvalidValue
from proxy.serve import packs_catalog
from proxy.serve.fresh import Fresh, yaml_files

if TYPE_CHECKING:
    from proxy.detector import Detector
    from proxy.engine import ToolPolicy
    from proxy.engine.policy import Pack

SESSION = "gatewatch-serve-check"


def _load_detector() -> Detector:
    from proxy.detector import load_detector

    return load_detector()


def _detector_sources() -> list[Path]:
    from proxy.detector import DetectorConfig, PackError

    sources = yaml_files(paths.packs_dir(), paths.config_dir())
    try:
        config = DetectorConfig.load()
    except PackError:
        return sources  # building the detector reports it
    return sources + yaml_files(*config.extra_rule_paths, *config.rule_paths)


def _load_packs() -> list[Pack]:
    from proxy.engine.packs import load_packs

    return load_packs()


_detector: Fresh[Detector] = Fresh(_load_detector, _detector_sources)
_packs: Fresh[list[Pack]] = Fresh(_load_packs, lambda: yaml_files(paths.packs_dir()))


def _check_detector() -> Detector | None:
    """The cached detector for a check, or None when detector.yaml turns it off (as the
    proxy's own, proxy.components.user_detector)."""
    from proxy.detector import DetectorConfig

    return _detector.get() if DetectorConfig.load().enabled else None


def check_verdict(
    server: str, tool: str, arguments: dict[str, Any], untrusted_context: list[str],
    policy_yaml: str | None,
) -> dict[str, Any]:
    """proxy.checking with the cached packs and detector; CheckError is a ValueError."""
    from proxy.checking import check_call

    result = check_call(server, tool, arguments, untrusted=untrusted_context,
                        policy_yaml=policy_yaml, packs=_packs.get, detector=_check_detector)
    return {
        **result.as_dict(),
        "note": "hypothetical: packs, your policy (and policy_yaml on top) and remembered "
                "approvals apply; taint in the audit log does not (pass untrusted_context); "
                "nothing is recorded",
    }


def enforced(server: str, tools: list[dict[str, Any]]) -> dict[str, str]:
    """What the engine enforces today on each listed tool (packs, heuristics, your policy)."""
    from proxy.engine import Engine, PolicyError, load_policy
    from proxy.store.database import Database

    user = paths.user_policy_path()
    files = [user] if user.exists() else []
    db = Database.memory()
    try:
        engine = Engine(
            server, SESSION, db, _packs.get(), [load_policy(f) for f in files],
            policy_paths=tuple(files),
        )
        engine.tools_listed(tools)
        return {str(t["name"]): _describe(engine.policy_for(str(t["name"]))) for t in tools}
    except PolicyError as exc:
        raise InvalidValue(str(exc)) from exc
    finally:
        db.close()


def _describe(policy: ToolPolicy) -> str:
    parts = []
    if policy.exfiltrating:
        sinks = ", ".join(policy.sink_params) or "every argument (no sink declared)"
        parts.append(f"sink gate on {sinks}")
    if policy.max_calls is not None:
        parts.append(f"budget {policy.max_calls} calls/session")
    if policy.path_params:
        where = list(policy.allowed_paths) if policy.allowed_paths is not None else "anywhere"
        parts.append(f"paths {', '.join(policy.path_params)} confined to {where}")
    if policy.arg_patterns or policy.arg_allowlists:
        ruled = [*policy.arg_patterns, *policy.arg_allowlists]
        parts.append(f"argument rules on {', '.join(ruled)}")
    if policy.output_trusted:
        parts.append("output trusted")
    return f"{'; '.join(parts) or 'no contract'} (from {' < '.join(policy.layers)})"


def verify_policy(policy_yaml: str) -> dict[str, Any]:
    from proxy.engine import PolicyError, load_policy
    with tempfile.TemporaryDirectory(prefix="gatewatch-verify-") as tmp:
        draft = Path(tmp) / "policy.yaml"
        draft.write_text(policy_yaml, encoding="utf-8")
        try:
            doc = load_policy(draft)
        except PolicyError as exc:
            return {"valid": False, "errors": [{"line": exc.line or None, "message": exc.reason}]}
    known = {p.name for p in _packs.get()}
    errors = [
        {"line": None, "message": f"server {name!r} asks for unknown pack {rules.pack!r}; "
                                  f"known packs: {', '.join(sorted(known))}"}
        for name, rules in doc.servers.items()
        if rules.pack is not None and rules.pack not in known
    ]
    return {
        "valid": not errors,
        "errors": errors,
        "servers": {
            name: {"pack": rules.pack, "tools": sorted(rules.tools),
                   "trusted_destinations": list(rules.trusted_destinations)}
            for name, rules in doc.servers.items()
        },
        "allowlist": list(doc.allowlist) if doc.allowlist is not None else None,
        "trusted_destinations": list(doc.trusted_destinations),
    }


def list_policies(pack: str | None) -> dict[str, Any]:
    from proxy.engine import PolicyError, load_policy
    packs = all_packs = _packs.get()
    if pack is not None:
        packs = [p for p in all_packs if p.name == pack]
        if not packs:
            names = ", ".join(p.name for p in all_packs)
            raise InvalidValue(f"no server pack named {pack!r}; packs: {names}")
    user = paths.user_policy_path()
    user_info: dict[str, Any] = {"path": str(user), "exists": user.exists()}
    if user.exists():
        try:
            doc = load_policy(user)
            user_info.update(valid=True, servers=sorted(doc.servers))
        except PolicyError as exc:
            user_info.update(valid=False, error=str(exc))
    return {
        "server_packs": [
            {"name": p.name, "description": p.description, "match": list(p.match),
             "tools": sorted(p.tools),
             "exfiltrating": sorted(t for t, e in p.tools.items() if e.get("exfiltrating"))}
            for p in packs
        ],
        "rule_packs": packs_catalog.catalog("rules") if pack is None else [],
        "user_policy": user_info,
    }


def detect_injection(text: str) -> dict[str, Any]:
    from proxy.detector import PackError

    try:
        detector = _detector.get()
    except PackError as exc:  # fail closed, as the proxy does: no scan, no verdict
        raise InvalidValue(f"the detector's packs are broken: {exc}") from exc
    found = detector.scan_text(text)
    return {
        "verdict": found.verdict,
        "score": round(found.score, 3),
        "rules": list(found.rules),
        "classes": list(found.classes),
        "reason": found.reason,
        "notes": list(found.notes),
    }
