"""Curated server packs (packs/servers/*.yaml) and which one applies to a wrapped server."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from proxy.engine.policy import Pack, load_pack


def packs_root() -> Path:
    from proxy.paths import packs_dir

    return packs_dir() / "servers"


def load_packs(root: Path | None = None) -> list[Pack]:
    """Every pack, sorted by name. A malformed pack raises PolicyError: never skipped."""
    root = packs_root() if root is None else root
    packs = [load_pack(path) for path in sorted(root.glob("*.yaml"))]
    return sorted(packs, key=lambda p: p.name)


def choose_pack(
    packs: list[Pack], server: str, tools: Iterable[str] = (), wanted: str | None = None
) -> Pack | None:
    """The pack for a server: the one the user names, else one whose name globs match the
    server's name (an exact name first), else one whose fingerprint tools are all listed."""
    by_name = {p.name: p for p in packs}
    if wanted is not None:
        return by_name.get(wanted)
    if server in by_name and by_name[server].matches_name(server):
        return by_name[server]
    for pack in packs:
        if pack.matches_name(server):
            return pack
    listed = set(tools)
    if listed:
        for pack in packs:
            if pack.fingerprint and listed.issuperset(pack.fingerprint):
                return pack
    return None
