"""How many servers are not protected yet, per client: what a first run tells the user."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from proxy.clients.discovery import LoadedConfig
from proxy.clients.entries import Transport


@dataclass(frozen=True)
class Unprotected:
    # client id -> stdio servers the client launches directly, without Gatewatch in between
    per_client: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # client id -> its label

    @property
    def servers(self) -> int:
        return sum(self.per_client.values())

    @property
    def clients(self) -> int:
        return len(self.per_client)

    def sentence(self) -> str:
        """E.g. "6 servers in 3 clients are not protected"; "" when every server is."""
        if not self.servers:
            return ""
        servers = f"{self.servers} server{'s' if self.servers != 1 else ''}"
        clients = f"{self.clients} client{'s' if self.clients != 1 else ''}"
        verb = "are" if self.servers != 1 else "is"
        return f"{servers} in {clients} {verb} not protected"


def unprotected(loaded: Iterable[LoadedConfig]) -> Unprotected:
    """Count the unwrapped stdio servers of each client (remote ones cannot be wrapped)."""
    counts: Counter[str] = Counter()
    labels: dict[str, str] = {}
    for item in loaded:
        client = item.config.client
        for entry in item.entries:
            if entry.transport is Transport.STDIO and not entry.wrapped:
                counts[client.id] += 1
                labels[client.id] = client.label
    return Unprotected(dict(counts), labels)
