"""The built-in packs as data: which files ship, and what each one covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proxy import paths
from proxy.errors import InvalidValue

KINDS = ("servers", "rules")


def pack_files(kind: str) -> list[Path]:
    if kind not in KINDS:
        raise InvalidValue(f"pack kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return sorted((paths.packs_dir() / kind).glob("*.yaml"))


def catalog(kind: str) -> list[dict[str, Any]]:
    """One entry per pack file: its name, path and the tools or rule ids it names."""
    import yaml

    out = []
    for path in pack_files(kind):
        entry: dict[str, Any] = {"name": path.stem, "path": str(path)}
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            entry["error"] = str(exc)
            out.append(entry)
            continue
        entry.update(_covered(kind, data))
        out.append(entry)
    return out


def _covered(kind: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    if kind == "rules":
        rules = data.get("rules") or []
        return {"rules": [r.get("id") for r in rules if isinstance(r, dict)]}
    tools = data.get("tools")
    names = list(tools) if isinstance(tools, dict) else [k for k in data if k != "server"]
    return {"tools": names}


def pack_text(kind: str, name: str) -> dict[str, Any] | None:
    """A pack's YAML text by name, or None when no such pack ships."""
    for path in pack_files(kind):
        if path.stem == name:
            return {"name": name, "path": str(path), "text": path.read_text(encoding="utf-8")}
    return None
