"""What the Clients tab and the tray say about protection, from the loaded configs. No Qt.

"6 servers in 3 clients are not protected", and per plan a plain summary of each change:
which servers of which app will run through Gatewatch (or directly again), what moves to the
keyring, and what the person must restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from proxy.clients.changes import Plan
from proxy.clients.discovery import LoadedConfig
from proxy.clients.entries import Transport


@dataclass(frozen=True)
class Unprotected:
    servers: int
    clients: tuple[str, ...]  # labels, in the order the configs were found

    def __bool__(self) -> bool:
        return self.servers > 0

    def text(self) -> str:
        if not self.servers:
            return "Every server your clients start runs through Gatewatch."
        servers = f"{self.servers} server{'s' if self.servers != 1 else ''}"
        where = self.clients[0] if len(self.clients) == 1 else f"{len(self.clients)} clients"
        verb = "is" if self.servers == 1 else "are"
        return f"{servers} in {where} {verb} not protected"


def unprotected(loaded: list[LoadedConfig]) -> Unprotected:
    count = 0
    clients: dict[str, None] = {}
    for config in loaded:
        for entry in config.entries:
            if entry.transport is Transport.STDIO and not entry.wrapped:
                count += 1
                clients[config.config.client.label] = None
    return Unprotected(count, tuple(clients))


def _names(servers: list[str]) -> str:
    if len(servers) <= 1:
        return "".join(servers)
    return ", ".join(servers[:-1]) + " and " + servers[-1]


def plan_summary(plan: Plan) -> list[str]:
    """One paragraph per changed file, in plain words (the diff is the detail behind it)."""
    lines: list[str] = []
    for change in plan.changes:
        client = change.config.client
        names = _names(change.servers) or "its servers"
        one = len(change.servers) == 1
        if plan.action == "wrap":
            text = (f"{client.label}: {names} will run through Gatewatch, which checks every "
                    f"tool call and result.")
            if change.to_store:
                secrets = sorted({u.rsplit("/", 1)[-1].split("#")[0] for u, _ in change.to_store})
                text += (f" {len(change.to_store)} secret value{'s' * (len(secrets) != 1)} "
                         f"({', '.join(secrets)}) move{'s' * (len(change.to_store) == 1)} into "
                         "the system keyring; the backup copy of the file still holds "
                         f"{'it' if len(change.to_store) == 1 else 'them'} in plain text.")
        else:
            text = (f"{client.label}: {names} will run directly again. Gatewatch will no longer "
                    f"check {'its' if one else 'their'} tool calls or results.")
            if change.to_forget:
                text += " Secrets kept in the keyring go back into the file."
        text += f" Restart: {client.restart}." if client.restart else \
            " The client picks up the change by itself."
        lines.append(text)
    return lines


def skipped_summary(plan: Plan) -> list[str]:
    notes = list(plan.notes)
    for s in plan.skipped:
        if s.server == "*":
            notes.append(f"{s.config.path.name} was left alone: {s.reason}")
        else:
            notes.append(f"{s.server} in {s.config.client.label} stays as it is: {s.reason}")
    return notes
