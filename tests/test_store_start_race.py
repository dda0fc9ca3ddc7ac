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
