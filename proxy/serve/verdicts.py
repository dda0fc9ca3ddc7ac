"""The engine- and detector-backed tools of `gatewatch serve`, as plain functions.

A hypothetical verdict never touches the user's audit log: the engine runs against a scratch
in-memory database, so nothing is pinned, counted or tainted for real. Packs and the detector
are cached until one of their files changes (proxy.serve.fresh).
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proxy import paths
from proxy.serve import packs_catalog
from proxy.serve.fresh import Fresh, yaml_files

if TYPE_CHECKING:
    from proxy.detector import Detector
    from proxy.engine import ToolPolicy
    from proxy.engine.policy import Pack
    from proxy.store.database import Database

SESSION = "gatewatch-serve-check"
UNTRUSTED_TOOL = "untrusted_context"  # the tool name the supplied untrusted texts are filed under


def _load_detector() -> Detector:
    from proxy.detector import PackError, load_detector

    try:
        return load_detector()
    except PackError as exc:  # fail closed, as the proxy does: no scan, no verdict
        raise ValueError(f"the detector's packs are broken: {exc}") from exc


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


def _scanners() -> dict[str, Any]:
    """The detector's hooks for the engine, as the proxy builds them (proxy.components):
    none when the detector is turned off in settings."""
    from proxy.components import scanners
    from proxy.settings import SettingsError, load_settings

    try:
        if not load_settings().detector:
            return {}
    except SettingsError as exc:
        raise ValueError(str(exc)) from exc
    return scanners(_detector.get())


def check_verdict(
    server: str, tool: str, arguments: dict[str, Any], untrusted_context: list[str],
    policy_yaml: str | None,
) -> dict[str, Any]:
    from proxy.engine import Engine, PolicyError, load_policy
    from proxy.store.database import Database

    with tempfile.TemporaryDirectory(prefix="gatewatch-check-") as tmp:
        db = Database.memory()
        draft = Path(tmp) / "policy.yaml"
        try:
            user = paths.user_policy_path()
            files = [user] if user.exists() else []
            if policy_yaml is not None:
                # A draft goes on top of the installed policy, as `gatewatch run --policy` does.
                draft.write_text(policy_yaml, encoding="utf-8")
                files.append(draft)
            engine = Engine(
                server, SESSION, db, _packs.get(), [load_policy(f) for f in files],
                policy_paths=tuple(files), **_scanners(),
            )
        except PolicyError as exc:
            if policy_yaml is None or exc.path != draft:
                raise ValueError(str(exc)) from exc  # an installed file: name it
            raise ValueError(f"policy_yaml line {exc.line}: {exc.reason}") from exc
        # The tool as a server would list it; the first listing is approved on first use, so
        # pinning does not mask the contracts being asked about.
        engine.tools_listed([{
            "name": tool,
            "inputSchema": {"type": "object", "properties": {k: {} for k in arguments}},
        }])
        _copy_trust(db, server, tool)
        for text in untrusted_context:
            engine.result_seen(UNTRUSTED_TOOL, {"content": [{"type": "text", "text": text}]})
        decision = engine.decide(tool, arguments)
        policy = engine.policy_for(tool)
        db.close()
    return {
        "verdict": decision.verdict,
        "contract": decision.contract,
        "reason": decision.reason,
        "destination": decision.destination,
        "origin": decision.origin,
        "detail": decision.detail,
        "pack": engine.pack,
        "layers": list(policy.layers),
        "note": "hypothetical: packs, your policy (and policy_yaml on top) and remembered "
                "approvals apply; taint in the audit log does not (pass untrusted_context); "
                "nothing is recorded",
    }


def _copy_trust(scratch: Database, server: str, tool: str) -> None:
    """Remembered approvals count, as in `gatewatch check`: copy the live ones for this call."""
    db = paths.db_path()
    if not db.exists():
        return
    from proxy.store.database import Database

    try:
        real = Database.open(db, readonly=True)
        try:
            grants = real.trust.live_for_tool(server, tool)
        finally:
            real.close()
    except sqlite3.Error as exc:
        raise ValueError(f"{db}: cannot read remembered approvals: {exc}") from exc
    scratch.trust.copy_in(grants)


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
        raise ValueError(str(exc)) from exc
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
            raise ValueError(f"no server pack named {pack!r}; packs: {names}")
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
    found = _detector.get().scan_text(text)
    return {
        "verdict": found.verdict,
        "score": round(found.score, 3),
        "rules": list(found.rules),
        "classes": list(found.classes),
        "reason": found.reason,
        "notes": list(found.notes),
    }
