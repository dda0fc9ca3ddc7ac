"""The typed stores over one gatewatch.db connection: the only code that knows the SQL.

Reads go to the connection. Writes that the proxy makes on its call path (pins, taint, flagged
results, audit steps, sessions) go through `write`, which the proxy points at its audit writer's
queue so they stay off the event loop and in order with the events; elsewhere (CLI, app, tests)
`write` runs the statement on the connection at once. Writes whose caller needs their outcome
(a grant's id, whether a revoke matched) always run on the connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.store.classifier_cache import ClassifierAnswers
    from proxy.store.events import EventLog
    from proxy.store.history import History
    from proxy.store.hot_results import HotResults
    from proxy.store.pins import Pins
    from proxy.store.server_state import ServerState
    from proxy.store.sessions import Sessions
    from proxy.store.taint import TaintStore
    from proxy.store.trust import Denials, TrustStore

# One parameterised statement (a list of rows: the statement once per row), run now or queued;
# only proxy/store makes the SQL it carries.
Params = tuple[Any, ...] | list[tuple[Any, ...]]
Write = Callable[[str, Params], None]


def direct(conn: sqlite3.Connection) -> Write:
    """A `Write` that runs each statement on `conn` at once."""

    def write(sql: str, params: Params) -> None:
        if isinstance(params, list):
            conn.executemany(sql, params)
        else:
            conn.execute(sql, params)

    return write


class Database:
    """Every store over one connection, made on first use."""

    def __init__(self, conn: sqlite3.Connection, write: Write | None = None) -> None:
        self.conn = conn
        self.write: Write = write if write is not None else direct(conn)

    @classmethod
    def open(cls, path: Path | str, *, readonly: bool = False,
             write: Write | None = None) -> Database:
        """gatewatch.db (or another file) through `schema.connect`: pragmas, migrations."""
        from proxy.store.schema import connect

        return cls(connect(path, readonly=readonly), write)

    @classmethod
    def memory(cls) -> Database:
        """A private, migrated in-memory database (tests, hypothetical checks)."""
        return cls.open(":memory:")

    def close(self) -> None:
        self.conn.close()

    # -- the file itself (gatewatch doctor, gatewatch version) ------------------------------

    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def quick_check(self) -> list[str]:
        """["ok"], or SQLite's descriptions of what is damaged."""
        return [row[0] for row in self.conn.execute("PRAGMA quick_check").fetchall()]

    def probe_write_lock(self) -> None:
        """Take the write lock and give it back: raises unless the file is writable now."""
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("ROLLBACK")

    @cached_property
    def events(self) -> EventLog:
        from proxy.store.events import EventLog

        return EventLog(self.conn, self.write)

    @cached_property
    def sessions(self) -> Sessions:
        from proxy.store.sessions import Sessions

        return Sessions(self.conn, self.write)

    @cached_property
    def pins(self) -> Pins:
        from proxy.store.pins import Pins

        return Pins(self.conn, self.write)

    @cached_property
    def trust(self) -> TrustStore:
        from proxy.store.trust import TrustStore

        return TrustStore(self.conn)

    @cached_property
    def denials(self) -> Denials:
        from proxy.store.trust import Denials

        return Denials(self.conn)

    @cached_property
    def taint(self) -> TaintStore:
        from proxy.store.taint import TaintStore

        return TaintStore(self.conn, self.write)

    @cached_property
    def hot_results(self) -> HotResults:
        from proxy.store.hot_results import HotResults

        return HotResults(self.conn, self.write)

    @cached_property
    def server_state(self) -> ServerState:
        from proxy.store.server_state import ServerState

        return ServerState(self.conn)

    @cached_property
    def classifier_cache(self) -> ClassifierAnswers:
        from proxy.store.classifier_cache import ClassifierAnswers

        return ClassifierAnswers(self.conn)

    @cached_property
    def history(self) -> History:
        from proxy.store.history import History

        return History(self.conn)
