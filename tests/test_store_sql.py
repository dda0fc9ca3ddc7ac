"""proxy/store/ is the only place with SQL: no SQL text, and no statement run, anywhere else in
proxy/ or app/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "proxy" / "store"

# SQL as it is written here: upper-case keywords followed by what makes them a statement (so
# "-----BEGIN PRIVATE KEY" or a sentence that says "select" is not taken for SQL).
SQL = re.compile("|".join((
    r"\bSELECT\b.*\bFROM\b", r"\bSELECT\s+(1|COUNT|MAX|MIN)\b", r"\bWITH\s+RECURSIVE\b",
    r"\bINSERT\s+(OR\s+\w+\s+)?INTO\b", r"\bUPDATE\s+\w+\s+SET\b", r"\bDELETE\s+FROM\b",
    r"\b(CREATE|DROP)\s+(TABLE|INDEX|TRIGGER|VIEW|VIRTUAL)\b", r"\bALTER\s+TABLE\b",
    r"\bPRAGMA\s+\w+", r"\bWHERE\s+\w+\s*(=|IN\b|IS\b|>|<)", r"\bORDER\s+BY\b",
    r"^(BEGIN(\s+(IMMEDIATE|EXCLUSIVE|DEFERRED|TRANSACTION))?|COMMIT|ROLLBACK)$",
)), re.DOTALL)
RUNS_SQL = {"execute", "executemany", "executescript"}


def sql_in(source: str) -> list[str]:
    """Where a module holds SQL text or runs a statement: 'line: what'."""
    found: list[str] = []
    tree = ast.parse(source)
    # An f-string is judged whole (its pieces alone may not look like SQL, or look twice).
    pieces = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
              for part in node.values}
    for node in ast.walk(tree):
        if id(node) in pieces:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) and isinstance(part.value, str)
                else "{}" for part in node.values
            )
            if SQL.search(text.strip()):
                found.append(f"{node.lineno}: {text[:60]!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL.search(node.value.strip()):
                found.append(f"{node.lineno}: {node.value[:60]!r}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in RUNS_SQL):
            found.append(f"{node.lineno}: .{node.func.attr}(...)")
    return found


def modules() -> list[Path]:
    return [
        path for top in ("proxy", "app") for path in sorted((ROOT / top).rglob("*.py"))
        if STORE not in path.parents
    ]


def test_no_sql_outside_proxy_store() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in modules()
        if (hits := sql_in(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_scan_finds_sql_in_every_form_it_takes() -> None:
    samples = {
        'Q = "SELECT id FROM events WHERE ts > ?"': 1,
        'conn.execute(f"UPDATE pins SET status = ? WHERE {where}", args)': 2,
        'W = "INSERT INTO trust (server) VALUES (?)"': 1,
        'X = ("DELETE FROM taint WHERE value = ?")': 1,
        'db.executemany(sql, rows)': 1,
        'V = "PRAGMA user_version"': 1,
        'B = "BEGIN IMMEDIATE"': 1,
        'F = f"SELECT {cols} FROM events"': 1,
    }
    for source, hits in samples.items():
        assert len(sql_in(source)) == hits, source


def test_the_scan_leaves_prose_and_pem_markers_alone() -> None:
    for source in (
        'MARK = "-----BEGIN RSA PRIVATE KEY-----"',
        'HELP = "select a server, then update the list"',
        'TEXT = "Write these changes? [y/N]"',
        'NOTE = "Delete a mail."',
    ):
        assert sql_in(source) == [], source


def test_the_scan_covers_the_whole_tree() -> None:
    scanned = {str(path.relative_to(ROOT)) for path in modules()}
    assert {"proxy/audit.py", "proxy/engine/engine.py", "proxy/ask/chain.py",
            "app/history_model.py", "app/store.py"} <= scanned
    assert not any(name.startswith("proxy/store/") for name in scanned)
    # and the store itself does hold the SQL the scan looks for
    assert sql_in((STORE / "trust.py").read_text(encoding="utf-8"))
