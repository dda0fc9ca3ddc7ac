"""History: the lazy model over a real SQLite file, filters, live rows, detail, export."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex
from PySide6.QtTest import QAbstractItemModelTester
from pytestqt.qtbot import QtBot

from app import history_query as hq
from app import wording
from app.history_model import HistoryModel
from app.history_tab import HistoryTab
from proxy.store import schema


def add_event(conn: sqlite3.Connection, ts: float, **fields: Any) -> int:
    row = {"session_id": "s1", "server": "gmail", "direction": "c2s", "kind": "request",
           "method": "tools/call", "tool": "send_email", "verdict": "allow", **fields}
    cols = ", ".join(["ts", *row])
    marks = ", ".join("?" * (len(row) + 1))
    cur = conn.execute(f"INSERT INTO events ({cols}) VALUES ({marks})", [ts, *row.values()])
    return int(cur.lastrowid or 0)


@pytest.fixture
def conn(db_file: Path) -> sqlite3.Connection:
    return schema.connect(db_file)


def fill(conn: sqlite3.Connection, n: int) -> None:
    conn.execute("BEGIN")
    for i in range(n):
        add_event(conn, 1000.0 + i, server=("gmail", "fs", "slack")[i % 3],
                  tool=("send_email", "read_file", "post")[i % 3],
                  verdict=("allow", "deny", "ask", None)[i % 4], reason=f"reason {i}")
    conn.execute("COMMIT")


def rows(model: HistoryModel) -> list[list[str]]:
    return [[model.index(r, c).data() for c in range(model.columnCount())]
            for r in range(model.rowCount())]


def test_model_passes_qt_model_tester_through_paging_and_filters(
    qtbot: QtBot, conn: sqlite3.Connection
) -> None:
    fill(conn, 700)
    model = HistoryModel(conn)
    assert model.rowCount() == hq.PAGE  # lazy: one page until the view asks for more
    # The tester fetches more on its own and checks every change from here on.
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    while model.canFetchMore(QModelIndex()):
        model.fetchMore(QModelIndex())
    assert model.rowCount() == 525  # every row with a verdict (3 of 4)
    model.set_filter(hq.HistoryFilter(server="fs", verdict="deny"))
    assert {(r[1], r[3]) for r in rows(model)} == {("fs", "deny")}
    model.set_filter(hq.HistoryFilter(decisions_only=False, since=1690.0))
    assert model.rowCount() == 10
    add_event(conn, 5000.0, tool="fresh_tool")
    assert model.poll() == 1
    assert model.index(0, 2).data() == "fresh_tool"


def test_pages_are_newest_first_with_no_gaps_or_repeats(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN")
    for i in range(600):  # many rows share a timestamp: the keyset must still be exact
        add_event(conn, 1000.0 + i // 7)
    conn.execute("COMMIT")
    seen: list[tuple[Any, ...]] = []
    after = None
    while page := hq.page(conn, hq.HistoryFilter(), after, limit=50):
        seen += page
        after = (page[-1][1], page[-1][0])
    assert len(seen) == 600 and len({r[0] for r in seen}) == 600
    assert seen == sorted(seen, key=lambda r: (r[1], r[0]), reverse=True)


def test_free_text_with_quotes_and_wildcards_is_literal(conn: sqlite3.Connection) -> None:
    tricky = 'it\'s "quoted" 100%_ off; DROP TABLE events; --'
    add_event(conn, 1.0, reason=tricky)
    add_event(conn, 2.0, reason="it's quoted 1000 off")
    add_event(conn, 3.0, reason="100x off")
    for text, expected in ((tricky, 1), ('"quoted"', 1), ("100%_", 1), ("%", 1), ("%_", 1),
                           ("it's", 2)):
        found = hq.page(conn, hq.HistoryFilter(text=text))
        assert len(found) == expected, text
    assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 3


def test_detail_explains_the_verdict(conn: sqlite3.Connection) -> None:
    detail = {"rules": ["exfil.email"], "origin": {"value": "new@random.com",
              "server": "gmail", "tool": "read_inbox", "ts": 100.0},
              "destinations": [{"param": "to", "destination": "new@random.com",
                                "verdict": "deny", "why": "was seen in untrusted output"}]}
    event_id = add_event(conn, 200.0, verdict="deny", contract="sink_gate",
                         reason="destination seen in untrusted output", decided_by="rules",
                         detail=json.dumps(detail), payload='{"to": "new@random.com"}',
                         trace_id="t-1")
    ev = hq.event(conn, event_id)
    assert ev is not None
    text = wording.explain_event(ev)
    assert "Verdict: deny (decided by rules)" in text
    assert "Contract: sink_gate" in text
    assert "Rules: exfil.email" in text
    assert "Tainted value: new@random.com — first seen in read_inbox on gmail" in text
    assert "Destination to=new@random.com: deny — was seen in untrusted output" in text
    assert '{"to": "new@random.com"}' in text
    assert hq.find_by_trace(conn, "t-1") == event_id


def test_export_writes_exactly_the_filtered_rows(conn: sqlite3.Connection,
                                                 tmp_path: Path) -> None:
    fill(conn, 2100)
    filt = hq.HistoryFilter(verdict="deny")
    expected = conn.execute("SELECT COUNT(*) FROM events WHERE verdict = 'deny'").fetchone()[0]
    with open(tmp_path / "out.csv", "w", newline="") as out:
        assert hq.export_csv(hq.all_rows(conn, filt), out) == expected
    with open(tmp_path / "out.csv", newline="") as f:
        exported = list(csv.DictReader(f))
    assert len(exported) == expected and {r["verdict"] for r in exported} == {"deny"}
    with open(tmp_path / "out.json", "w") as out:
        hq.export_json(hq.all_rows(conn, filt), out)
    data = json.loads((tmp_path / "out.json").read_text())
    assert len(data) == expected and len({d["id"] for d in data}) == expected


def test_tab_filters_live_rows_and_opens_a_hidden_event(qtbot: QtBot,
                                                        conn: sqlite3.Connection) -> None:
    fill(conn, 30)
    tab = HistoryTab(conn)
    qtbot.addWidget(tab)
    tab.text.setText('"no such thing"')
    qtbot.waitUntil(lambda: tab.model.rowCount() == 0)
    target = add_event(conn, 9999.0, verdict="block", tool="read_inbox", reason="injection")
    tab.show_event(target)  # hidden by the text filter: the filters clear
    assert tab.text.text() == ""
    row = tab.table.currentIndex().row()
    assert tab.model.event_id(row) == target
    assert "Verdict: block" in tab.detail.toPlainText()
    add_event(conn, 10000.0, tool="brand_new", verdict="deny")
    qtbot.waitUntil(lambda: tab.model.index(0, 2).data() == "brand_new", timeout=5000)
    out = Path(conn.execute("PRAGMA database_list").fetchone()[2]).parent / "x.json"
    assert tab.export_to(str(out), as_json=True) == tab.model.rowCount()


def test_free_text_search_loads_off_the_gui_thread(qtbot: QtBot,
                                                   conn: sqlite3.Connection) -> None:
    fill(conn, 600)
    tab = HistoryTab(conn)
    qtbot.addWidget(tab)
    with qtbot.waitSignal(tab.model.searching, check_params_cb=lambda busy: busy is False,
                          timeout=5000):
        tab.text.setText("reason 59")  # reason 59, 590..599 (those with a verdict)
    found = {tab.model.index(r, 5).data() for r in range(tab.model.rowCount())}
    assert found and all(reason.startswith("reason 59") for reason in found)
    expected = conn.execute("SELECT COUNT(*) FROM events WHERE verdict IS NOT NULL AND "
                            "reason LIKE 'reason 59%'").fetchone()[0]
    assert len(found) == expected


def test_filter_menus_list_each_server_and_tool_once(conn: sqlite3.Connection) -> None:
    fill(conn, 60)
    add_event(conn, 1.0, tool=None, method="initialize")
    assert hq.distinct_values(conn, "server") == ["fs", "gmail", "slack"]
    assert hq.distinct_values(conn, "tool") == ["post", "read_file", "send_email"]
    with pytest.raises(ValueError):
        hq.distinct_values(conn, "payload")
