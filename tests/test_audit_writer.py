"""AuditWriter: batches off the hot path, keeps order, waits instead of dropping when full."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from proxy.audit import PAYLOAD_LIMIT, AuditEvent, AuditWriter
from proxy.store.schema import connect
from tests.relay_pipes import query, wait_for


def event(i: int, **kw: Any) -> AuditEvent:
    return AuditEvent("c2s", "request", method="m", rpc_id=str(i), size=i, **kw)


def rpc_ids(db: Path) -> list[str]:
    return [r["rpc_id"] for r in query(db, "SELECT rpc_id FROM events ORDER BY id")]


def record_batches(writer: AuditWriter) -> list[int]:
    """Wrap the writer's flush to see the batch sizes it commits."""
    sizes: list[int] = []
    flush = writer._flush

    async def counting(batch: list[Any]) -> None:
        sizes.append(len(batch))
        await flush(batch)

    writer._flush = counting  # type: ignore[method-assign]
    return sizes


async def test_events_are_batched_in_order(db_file: Path) -> None:
    writer = AuditWriter(db_file, "s1", "srv", window=0.05, max_batch=100)
    await writer.start()
    sizes = record_batches(writer)
    for i in range(250):
        assert writer.put(event(i)) is None  # room in the queue: the relay never waits
    await writer.close()
    assert rpc_ids(db_file) == [str(i) for i in range(250)]
    # Put in one go, they are written in a few full batches, not one transaction per row.
    assert sizes == [100, 100, 50]
    assert writer.written == 250 and writer.failed == 0 and writer.waited == 0


async def test_statements_keep_their_place_among_events(db_file: Path) -> None:
    writer = AuditWriter(db_file, "s1", "srv")
    await writer.start()
    writer.put(event(1))
    writer.execute(
        "INSERT INTO sessions (id, server, command, started_at) VALUES (?, ?, ?, ?)",
        ("s1", "srv", "[]", 1.0),
    )
    writer.execute("UPDATE sessions SET exit_code = ? WHERE id = ?", (7, "s1"))
    writer.put(event(2))
    await writer.close()
    assert rpc_ids(db_file) == ["1", "2"]
    assert [tuple(r) for r in query(db_file, "SELECT id, exit_code FROM sessions")] == [("s1", 7)]


async def test_full_queue_makes_the_producer_wait_and_drops_nothing(db_file: Path) -> None:
    connect(db_file).close()
    blocker = sqlite3.connect(db_file, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer's next transaction stalls on this lock
    writer = AuditWriter(db_file, "s1", "srv", window=0.01, max_batch=5, maxsize=10)
    await writer.start()

    async def produce() -> None:
        for i in range(100):
            await writer.put_wait(event(i))

    producer = asyncio.create_task(produce())
    try:
        await wait_for(lambda: writer.waited > 0, what="the producer to hit a full queue")
        assert not producer.done()
        assert writer.high_water == 10
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    await asyncio.wait_for(producer, 30)
    await writer.close()
    assert rpc_ids(db_file) == [str(i) for i in range(100)]
    assert writer.failed == 0


async def test_payload_is_bounded_and_redacted(db_file: Path) -> None:
    writer = AuditWriter(db_file, "s1", "srv")
    await writer.start()
    big = {"params": {"text": "q" * (PAYLOAD_LIMIT * 3), "password": "hunter2"}}
    writer.put(event(1, payload=big))
    writer.put(event(2, payload=b"raw bytes \xff that did not parse"))
    writer.put(event(3, detail={"token": "t0ps3cret", "rule": "r1"}))
    await writer.close()
    rows = query(db_file, "SELECT payload, payload_truncated, detail FROM events ORDER BY id")
    assert len(rows[0]["payload"]) <= PAYLOAD_LIMIT and rows[0]["payload_truncated"] == 1
    assert "hunter2" not in rows[0]["payload"]
    assert rows[1]["payload"].startswith("raw bytes ") and rows[1]["payload_truncated"] == 0
    assert "t0ps3cret" not in rows[2]["detail"] and "r1" in rows[2]["detail"]


async def test_two_writers_share_one_database(db_file: Path) -> None:
    writers = [AuditWriter(db_file, f"s{n}", "srv", window=0.001, max_batch=7) for n in (1, 2)]
    for w in writers:
        await w.start()

    async def produce(w: AuditWriter) -> None:
        for i in range(300):
            await w.put_wait(event(i))
            if i % 10 == 0:
                await asyncio.sleep(0)  # interleave the two writers' transactions

    await asyncio.gather(*(produce(w) for w in writers))
    for w in writers:
        await w.close()
    counts = query(db_file, "SELECT session_id, COUNT(*) FROM events GROUP BY session_id")
    assert sorted(tuple(r) for r in counts) == [("s1", 300), ("s2", 300)]


async def test_the_audit_log_is_private_to_its_user(tmp_path: Path) -> None:
    db = tmp_path / "new-dir" / "gatewatch.db"
    writer = AuditWriter(db, "s1", "srv")
    await writer.start()
    writer.put(event(1))
    await writer.close()
    assert db.parent.stat().st_mode & 0o777 == 0o700
    for path in (db, db.with_name(db.name + "-wal")):
        if path.exists():
            assert path.stat().st_mode & 0o777 == 0o600, path
    # A database left readable by others (by an older Gatewatch) is tightened on open.
    db.chmod(0o644)
    connect(db).close()
    assert db.stat().st_mode & 0o777 == 0o600


async def test_a_full_batch_is_written_without_waiting_out_the_window(db_file: Path) -> None:
    # A window far longer than the test's patience: the writer must be woken by the batch
    # filling up, not by a timer or a poll.
    writer = AuditWriter(db_file, "s1", "srv", window=3600, max_batch=50)
    await writer.start()
    sizes = record_batches(writer)
    writer.put(event(0))
    await asyncio.sleep(0)  # the writer takes the first event and starts gathering
    for i in range(1, 50):
        writer.put(event(i))
    await wait_for(lambda: writer.written == 50, what="the full batch to be committed")
    assert sizes == [50]
    writer.put(event(50))  # a lone event waits for the window, or for close()
    await writer.close()
    assert rpc_ids(db_file) == [str(i) for i in range(51)]
    assert sizes == [50, 1]


async def test_rows_the_relay_writes_for_raw_frames_are_redacted(db_file: Path) -> None:
    """Whatever a caller hands the audit API (raw bytes, a reason, a detail) is redacted there:
    the relay needs no redaction of its own."""
    writer = AuditWriter(db_file, "s1", "srv")
    await writer.start()
    secret = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    writer.put(AuditEvent("s2c", "parse_error", payload=f'{{"x": "{secret}", '.encode()))
    writer.put(AuditEvent("c2s", "oversize", payload=("password=hunter2 " * 3).encode()))
    writer.put(AuditEvent("gw", "lifecycle", reason=f"upstream said {secret}"))
    await writer.close()
    dump = repr([tuple(r) for r in query(db_file, "SELECT payload, reason FROM events")])
    assert secret not in dump and "hunter2" not in dump
    assert dump.count("[redacted]") == 5


async def test_stores_write_through_the_queue_from_the_loop_and_from_worker_threads(
    db_file: Path,
) -> None:
    from proxy.store.database import Database

    # A window longer than the test: the batch is written when the writer closes.
    writer = AuditWriter(db_file, "s1", "srv", window=600)
    await writer.start()
    writer.sessions.started("s1", "srv", "[]", 1, 2, 1.0)
    store = Database.open(db_file, write=writer.writer(asyncio.get_running_loop()))
    # The engine is built in a worker thread (proxy.components) and records from there.
    await asyncio.to_thread(store.taint.record_all,
                            [("a@evil.example", "email", "free_text", "srv", "read", "s1", 2.0)])
    store.hot_results.record("srv", "read", "s1", 3.0, "block", "text")  # from the loop
    # Queued, not yet written: a reader (the proxy's own connection) sees nothing so far.
    assert store.taint.sightings(["a@evil.example"]) == []
    writer.sessions.ended("s1", 4.0, 0, "done")
    await writer.close()
    assert [row.server for row in store.taint.sightings(["a@evil.example"])] == ["srv"]
    assert [row.text for row in store.hot_results.others_since(0, "other", None)] == ["text"]
    assert [(r.server, r.exit_code) for r in store.sessions.recent()] == [("srv", 0)]
    store.close()


async def test_a_write_on_the_loop_never_waits_for_a_batch_that_needs_the_loop(
    db_file: Path,
) -> None:
    """The ask chain writes a grant synchronously on the event loop. If the writer's batch
    transaction stayed open across loop turns, that write would hold the loop while waiting
    for the writer's lock, and the writer could never commit: "database is locked"."""
    writer = AuditWriter(db_file, "s1", "srv", window=0.0, max_batch=20)
    await writer.start()
    other = connect(db_file)
    other.execute("PRAGMA busy_timeout = 2000")
    try:
        for round_ in range(40):
            for i in range(20):
                writer.put(event(round_ * 20 + i, payload={"text": "x" * 2000}))
            for _ in range(5):
                await asyncio.sleep(0)  # let the writer open its batch
                other.execute(
                    "INSERT INTO trust (server, tool, destination, created_at) "
                    "VALUES (?, ?, ?, ?)", ("srv", "send", f"r{round_}@x.example", 1.0))
        await writer.close()
    finally:
        other.close()
    assert writer.failed == 0 and writer.written == 800
    assert len(query(db_file, "SELECT id FROM trust")) == 200


async def test_call_outcomes_land_on_their_rows_wherever_a_batch_splits_its_inserts(
    db_file: Path,
) -> None:
    """The writer inserts a batch many rows per statement; the outcome triggers still run row
    by row: a call's decision and its flagged result reach its request row whether they share
    a statement with it or come in a later one, and every row keeps its place."""
    from proxy.store.events import ROWS_PER_INSERT

    writer = AuditWriter(db_file, "s1", "srv", window=600, max_batch=10_000)
    await writer.start()
    expected: list[str] = []
    calls: dict[str, tuple[str, str]] = {}
    for n, filler in enumerate((0, ROWS_PER_INSERT - 2, ROWS_PER_INSERT - 1, ROWS_PER_INSERT,
                                2 * ROWS_PER_INSERT - 3, 5)):
        for i in range(filler):
            writer.put(event(10_000 * (n + 1) + i))
            expected.append(str(10_000 * (n + 1) + i))
        rid = f"call-{n}"
        verdict, result = ("allow", "warn") if n % 2 else ("deny", "block")
        writer.put(AuditEvent("c2s", "request", method="tools/call", rpc_id=rid, tool="t",
                              verdict="ask"))
        writer.put(AuditEvent("gw", "decision", method="tools/call", rpc_id=rid, tool="t",
                              verdict=verdict, decided_by="app", reason=f"human {n}"))
        writer.put(AuditEvent("s2c", "response", method="tools/call", rpc_id=rid, tool="t",
                              verdict=result, reason=f"flagged {n}", trace_id=f"tr-{n}"))
        expected += [rid, rid, rid]
        calls[rid] = (verdict, result)
    await writer.close()
    assert rpc_ids(db_file) == expected  # one batch, in order
    rows = query(db_file, "SELECT rpc_id, outcome, outcome_by, outcome_reason, result_verdict,"
                          " result_trace, final FROM events WHERE call_row = 1 ORDER BY id")
    assert [r["rpc_id"] for r in rows] == list(calls)
    for row in rows:
        n = row["rpc_id"].split("-")[1]
        verdict, result = calls[row["rpc_id"]]
        assert (row["outcome"], row["outcome_by"], row["outcome_reason"]) == (
            verdict, "app", f"human {n}")
        assert (row["result_verdict"], row["result_trace"]) == (result, f"tr-{n}")
        assert row["final"] == ("block" if result == "block" else "warn")
