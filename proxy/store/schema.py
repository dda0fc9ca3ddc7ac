"""Schema of gatewatch.db, versioned with PRAGMA user_version.

MIGRATIONS[i] takes the database from version i to i + 1. Append; never edit a shipped step.
Every connection (proxy, CLI, app) goes through `connect()` so pragmas are the same everywhere.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000

MIGRATIONS: list[str] = [
    # 0 -> 1
    """
    CREATE TABLE sessions (
        id               TEXT PRIMARY KEY,      -- random hex, made by the proxy
        server           TEXT NOT NULL,
        command          TEXT NOT NULL,         -- JSON argv, secrets redacted
        pid              INTEGER,
        upstream_pid     INTEGER,
        client_name      TEXT,
        client_version   TEXT,
        protocol_version TEXT,
        era              TEXT,                  -- 'handshake' | '2026-07-28' | NULL (unknown yet)
        can_elicit       INTEGER,
        started_at       REAL NOT NULL,
        ended_at         REAL,
        exit_code        INTEGER,
        end_reason       TEXT
    );
    CREATE INDEX sessions_server ON sessions(server, started_at);

    CREATE TABLE events (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        ts               REAL NOT NULL,
        session_id       TEXT NOT NULL,
        server           TEXT NOT NULL,
        direction        TEXT NOT NULL,         -- 'c2s' | 's2c' | 'gw2c' | 'gw2s' | 'gw'
        kind             TEXT NOT NULL,         -- request | response | error | notification |
                                                -- parse_error | oversize | lifecycle
        method           TEXT,
        rpc_id           TEXT,
        tool             TEXT,
        size             INTEGER NOT NULL DEFAULT 0,
        verdict          TEXT,                  -- allow | deny | ask | pass | warn | block
        contract         TEXT,                  -- which contract or detector policy fired
        reason           TEXT,
        decided_by       TEXT,                  -- rules|trust|elicitation|app|fallback|timeout
        detail           TEXT,                  -- JSON: rule ids, taint source, grant, diff ...
        latency_ms       REAL,
        trace_id         TEXT,
        payload          TEXT,                  -- bounded, secrets redacted
        payload_truncated INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX events_ts ON events(ts);
    CREATE INDEX events_server_ts ON events(server, ts);
    CREATE INDEX events_verdict_ts ON events(verdict, ts);
    CREATE INDEX events_tool_ts ON events(tool, ts);
    CREATE INDEX events_method_ts ON events(method, ts);
    CREATE INDEX events_session ON events(session_id, id);
    CREATE INDEX events_trace ON events(trace_id) WHERE trace_id IS NOT NULL;

    -- Tool pinning (trust on first use), per server.
    CREATE TABLE pins (
        server           TEXT NOT NULL,
        tool             TEXT NOT NULL,
        digest           TEXT NOT NULL,         -- hash of name + description + input schema
        description      TEXT,
        input_schema     TEXT,                  -- JSON
        annotations      TEXT,                  -- JSON: title and MCP annotations
        status           TEXT NOT NULL,         -- approved | pending | rejected
        pending_digest   TEXT,                  -- a changed version awaiting a human
        pending_description TEXT,
        pending_schema   TEXT,
        pending_annotations TEXT,
        first_seen       REAL NOT NULL,
        updated_at       REAL NOT NULL,
        PRIMARY KEY (server, tool)
    );

    -- Destination-shaped values seen in untrusted tool output (cross-server taint).
    CREATE TABLE taint (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        value            TEXT NOT NULL,         -- normalised destination
        kind             TEXT NOT NULL,         -- email | url | host | phone | handle | channel
        provenance       TEXT NOT NULL,         -- free_text | structured
        server           TEXT NOT NULL,
        tool             TEXT,
        session_id       TEXT,
        ts               REAL NOT NULL
    );
    CREATE INDEX taint_value ON taint(value, provenance);

    -- Remembered human approvals: server + tool + destination, never a destination alone.
    CREATE TABLE trust (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        server           TEXT NOT NULL,
        tool             TEXT NOT NULL,
        destination      TEXT NOT NULL,
        created_at       REAL NOT NULL,
        expires_at       REAL,
        revoked_at       REAL,
        decided_by       TEXT,                  -- elicitation | app | cli
        note             TEXT
    );
    CREATE INDEX trust_lookup ON trust(server, tool, destination);

    -- Local LLM classifier results, keyed by SHA-256 of the scanned text.
    CREATE TABLE classifier_cache (
        sha256           TEXT PRIMARY KEY,
        model            TEXT NOT NULL,
        label            TEXT NOT NULL,
        score            REAL NOT NULL,
        created_at       REAL NOT NULL
    );

    -- Per-server switches the app sets (pause) that proxies read.
    CREATE TABLE server_state (
        server           TEXT PRIMARY KEY,
        paused           INTEGER NOT NULL DEFAULT 0,
        updated_at       REAL NOT NULL
    );
    """,
    # 1 -> 2: results the detector flagged, whose values a state-changing call may not use
    # (proxy/engine/hot_values.py), shared by every proxy.
    """
    CREATE TABLE hot_results (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        server           TEXT NOT NULL,
        tool             TEXT,
        session_id       TEXT,
        ts               REAL NOT NULL,
        verdict          TEXT NOT NULL,         -- warn | block
        text             TEXT NOT NULL          -- normalised text of the result, bounded
    );
    CREATE INDEX hot_results_ts ON hot_results(ts);
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(RuntimeError):
    """The database is newer than this Gatewatch, or could not be migrated."""


def apply_pragmas(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database to SCHEMA_VERSION. Safe when several processes start at once."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return version
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"database schema v{version} is newer than this Gatewatch (v{SCHEMA_VERSION}); "
            "upgrade Gatewatch"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read inside the write lock: another process may have migrated meanwhile.
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[step]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {step + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; split on complete statements instead.
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def connect(path: Path | str, *, readonly: bool = False) -> sqlite3.Connection:
    """A synchronous connection with Gatewatch's pragmas, migrated unless readonly."""
    path = Path(path)
    if not readonly:
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        f"file:{path}?mode=ro" if readonly else str(path),
        uri=readonly,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    conn.row_factory = sqlite3.Row
    if readonly:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    else:
        apply_pragmas(conn)
        migrate(conn)
    return conn
