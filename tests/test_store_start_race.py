"""Several proxies opening one fresh database at the same moment (a client starting all its
servers at once): every one of them gets a migrated WAL database, none is told it is locked."""

from __future__ import annotations

import multiprocessing
import traceback
from pathlib import Path
from typing import Any

from proxy.store.schema import SCHEMA_VERSION, connect


def _open(path: str, go: Any, out: Any) -> None:
    go.wait()  # all at once, as a client starting its servers
    try:
        conn = connect(path)
        out.put((conn.execute("PRAGMA journal_mode").fetchone()[0],
                 conn.execute("PRAGMA user_version").fetchone()[0]))
        conn.close()
    except Exception:
        out.put(traceback.format_exc())


def test_proxies_opening_a_fresh_database_together_all_succeed(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for round_ in range(40):
        path = str(tmp_path / f"r{round_}" / "gatewatch.db")
        Path(path).parent.mkdir()
        out, go = ctx.Queue(), ctx.Event()
        procs = [ctx.Process(target=_open, args=(path, go, out)) for _ in range(4)]
        for proc in procs:
            proc.start()
        go.set()
        results = [out.get(timeout=60) for _ in procs]
        for proc in procs:
            proc.join(60)
        assert results == [("wal", SCHEMA_VERSION)] * 4, results


def test_a_proxy_waits_while_another_process_upgrades_the_database(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Upgrading a big history takes longer than the busy timeout: a proxy started meanwhile
    waits for the upgrade instead of failing with "database is locked"."""
    import logging
    import sqlite3
    import threading

    from proxy.store import schema

    path = tmp_path / "gatewatch.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA journal_mode = WAL")
    for step in schema.MIGRATIONS[:-1]:  # a database of the version before
        for statement in schema._statements(step):
            old.execute(statement)
    old.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 100)
    old.execute("BEGIN IMMEDIATE")  # another process, upgrading

    waiting = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "upgrading the database" in record.getMessage():
                waiting.set()

    handler = Seen()
    schema.log.addHandler(handler)
    outcome: list[object] = []

    def start_proxy() -> None:
        try:
            conn = connect(path)
            outcome.append(conn.execute("PRAGMA user_version").fetchone()[0])
            conn.close()
        except Exception as exc:
            outcome.append(exc)

    proxy = threading.Thread(target=start_proxy)
    try:
        proxy.start()
        assert waiting.wait(30), outcome  # it waited past its busy timeout (100 ms)
        old.execute("COMMIT")  # the other process is done (it did nothing here)
        proxy.join(30)
    finally:
        schema.log.removeHandler(handler)
        old.close()
    assert outcome == [SCHEMA_VERSION]
    check = sqlite3.connect(path)
    assert check.execute("SELECT name FROM sqlite_master WHERE name = 'hot_results'").fetchone()
    check.close()
