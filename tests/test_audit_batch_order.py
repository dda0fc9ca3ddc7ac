"""A batch's event rows go in as few INSERTs as possible: statements on other tables (taint,
sessions, pins, flagged results) that were queued between them run after them, in the same
transaction and in their own order. The database after each batch must be the one the old
steps (tests/reference_audit_rows.py) made: every table, every row, every column (the call
outcome triggers' columns included)."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from proxy.audit import AuditEvent, AuditWriter
from proxy.engine.pinning import ToolVersion
from proxy.store.events import EventLog
from proxy.store.hot_results import HotResults
from proxy.store.pins import Pins
from proxy.store.sessions import SessionRecorder
from proxy.store.taint import TaintStore
from proxy.store.writer import EventRows, Statement, _open, _write_steps
from tests.reference_audit_rows import reference_rows

TABLES = ("events", "taint", "sessions", "pins", "hot_results")


def writer() -> AuditWriter:
    return AuditWriter(Path("unused.db"), "s1", "gmail")


def call_items(rnd: random.Random, i: int, queue: list[Any]) -> None:
    """One call's worth of what the relay and the stores queue, in the relay's order."""
    rpc, tool = str(i % 7), rnd.choice(["send_email", "read_file"])
    write = queue.append

    def statement(sql: str, params: Any) -> None:
        write(Statement(sql, params))

    verdict = rnd.choice(["allow", "allow", "deny", "ask"])
    queue.append(AuditEvent("c2s", "request", "tools/call", rpc, tool, 90, verdict,
                            reason="no contract objects", decided_by="rules",
                            detail={"layers": ["heuristics"]}, payload={"id": i, "a": "x" * i},
                            ts=1000.0 + i))
    if verdict == "ask":
        for _ in range(rnd.randrange(3)):
            EventLog(None, statement).ask_step(  # type: ignore[arg-type]
                ts=1000.1 + i, session_id="s1", server="gmail", rpc_id=rpc, tool=tool,
                contract="sink", reason="asked", step="elicitation", detail=None)
        queue.append(AuditEvent("gw", "decision", "tools/call", rpc, tool, 0,
                                rnd.choice(["allow", "deny"]), decided_by="app", ts=1000.2 + i))
    if verdict == "deny":
        queue.append(AuditEvent("gw2c", "error", "tools/call", rpc, tool, 50, "deny",
                                ts=1000.3 + i))
        return
    result = rnd.choice([None, None, "warn", "block"])
    queue.append(AuditEvent("s2c", "response", "tools/call", rpc, tool, 80, result,
                            trace_id=f"t{i}" if result else None,
                            payload={"result": {"text": f"see https://x{i}.example/"}},
                            ts=1000.5 + i))
    if rnd.random() < 0.8:
        TaintStore(None, statement).record_all(  # type: ignore[arg-type]
            [(f"x{i}.example/", "url", "free_text", "gmail", tool, "s1", 1000.5 + i)]
            * rnd.randrange(1, 3))
    if result:
        HotResults(None, statement).record(  # type: ignore[arg-type]
            "gmail", tool, "s1", 1000.5 + i, result, f"text {i}")
    if rnd.random() < 0.05:
        Pins(None, statement).approve(  # type: ignore[arg-type]
            "gmail", ToolVersion(tool, f"desc {i}", "{}", "{}"), now=1000.0 + i)


def session_items(rnd: random.Random, calls: int) -> list[Any]:
    queue: list[Any] = []
    recorder = SessionRecorder(lambda sql, params: queue.append(Statement(sql, params)))
    recorder.started("s1", "gmail", "[]", 1, 2, 999.0)
    for i in range(calls):
        if i == 2:
            recorder.client_known("s1", name="c", version="1", protocol_version="p",
                                  era="handshake", can_elicit=True)
        call_items(rnd, i, queue)
    recorder.ended("s1", 2000.0, 0, "eof")
    return queue


def dump(db: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    return {t: [tuple(r) for r in db.execute(f"SELECT * FROM {t} ORDER BY rowid")]
            for t in TABLES}


@pytest.mark.parametrize("seed", range(40))
def test_regrouped_batches_leave_the_database_the_old_steps_left(tmp_path: Path,
                                                                 seed: int) -> None:
    rnd = random.Random(seed)
    items = session_items(rnd, rnd.randrange(5, 60))
    old, new = _open(tmp_path / "old.db"), _open(tmp_path / "new.db")
    w = writer()
    start = 0
    while start < len(items):  # batches of any size, cut anywhere
        batch = items[start:start + rnd.randrange(1, 80)]
        start += len(batch)
        _write_steps(old, reference_rows(w, batch))
        _write_steps(new, w._rows(batch))
        assert dump(new) == dump(old)
    assert dump(new)["events"] and dump(new)["taint"]


def test_an_echo_batch_is_one_insert_of_events_then_the_taint_rows() -> None:
    queue: list[Any] = []
    for i in range(30):
        queue.append(AuditEvent("c2s", "request", "tools/call", str(i), "echo", ts=float(i)))
        queue.append(AuditEvent("s2c", "response", "tools/call", str(i), "echo", ts=i + 0.5))
        queue.append(Statement("INSERT INTO taint (value) VALUES (?)", [(f"v{i}",)]))
    steps = writer()._rows(queue)
    assert isinstance(steps[0], EventRows) and len(steps[0].rows) == 60
    # The taint statements, one executemany.
    assert steps[1:] == [Statement("INSERT INTO taint (value) VALUES (?)",
                                   [(f"v{i}",) for i in range(30)])]


def test_only_runs_of_one_many_row_statement_are_merged() -> None:
    taint, hot = "INSERT INTO taint (value) VALUES (?)", "INSERT INTO hot_results (text) VALUES (?)"
    queue: list[Any] = [Statement(taint, [("a",)]), Statement(taint, [("b",), ("c",)]),
                        Statement(hot, ("x",)), Statement(hot, ("y",)), Statement(taint, [("d",)])]
    assert writer()._rows(queue) == [Statement(taint, [("a",), ("b",), ("c",)]),
                                     Statement(hot, ("x",)), Statement(hot, ("y",)),
                                     Statement(taint, [("d",)])]


def test_a_statement_on_events_keeps_its_place() -> None:
    queue: list[Any] = [AuditEvent("c2s", "request", "tools/call", "1", "t", ts=1.0)]
    EventLog(None, lambda sql, params: queue.append(Statement(sql, params))).ask_step(  # type: ignore[arg-type]
        ts=1.1, session_id="s1", server="gmail", rpc_id="1", tool="t", contract=None,
        reason="r", step="elicitation", detail=None)
    queue.append(AuditEvent("gw", "decision", "tools/call", "1", "t", ts=1.2))
    kinds = [type(s).__name__ for s in writer()._rows(queue)]
    assert kinds == ["EventRows", "Statement", "EventRows"]


def test_the_schema_keeps_what_regrouping_relies_on(tmp_path: Path) -> None:
    """`_rows` moves statements on other tables past event rows. That leaves the same database
    only while no other table has a trigger and `events`' triggers touch no table the audit
    queue writes: a schema change that breaks this must fail here, not reorder history."""
    db = _open(tmp_path / "schema.db")
    triggers = db.execute(
        "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
    ).fetchall()
    assert triggers
    # Every table the queue's statements may write: all but `events`, its search index's
    # tables and the indexer's progress (written by the indexer in its own transactions).
    queued = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not name.startswith("events") and name != "fts_progress"}
    assert {"taint", "sessions", "pins", "hot_results", "trust"} <= queued
    for table, sql in triggers:
        assert table == "events", sql
        named = {w.lower() for w in re.findall(r"[A-Za-z_]+", sql)}
        assert not named & queued, sql
