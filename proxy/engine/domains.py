"""The names above a host that its owner controls, by the Public Suffix List.

`upload.attacker.example` is under `attacker.example`: whoever named the parent in untrusted
text can receive at the child. `bbc.co.uk` is not under anything of an attacker's (`co.uk` is
a public suffix), nor is `evil.github.io` (each `github.io` name has its own owner). The list
ships with the `publicsuffixlist` package; nothing is downloaded.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from proxy.engine.urls import canonical_ip


@cache
def _suffixes() -> Any:
    # About 35 ms to build: only a sink call's destination under some domain needs it.
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@lru_cache(maxsize=1024)
def parent_domains(host: str) -> tuple[str, ...]:
    """The parents of a canonical host name down to its registrable domain, nearest first:
    `a.b.example.co.uk` → (`b.example.co.uk`, `example.co.uk`). Empty for an IP literal, a
    registrable domain itself, a public suffix or a single label."""
    name = host.rstrip(".")
    if name.count(".") < 2 or ":" in name or canonical_ip(name) is not None:
        return ()
    registrable = _suffixes().privatesuffix(name)
    if registrable is None or registrable == name or not name.endswith("." + registrable):
        return ()
    labels = name.split(".")
    return tuple(".".join(labels[i:]) for i in range(1, len(labels) - registrable.count(".")))
