"""Schema of gatewatch.db, versioned with PRAGMA user_version.

MIGRATIONS[i] takes the database from version i to i + 1. Append; never edit a shipped step.
Every connection (proxy, CLI, app) goes through `connect()` so pragmas are the same everywhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import time
from pathlib import Path

from proxy.errors import GatewatchError

BUSY_TIMEOUT_MS = 10_000
# How long a process waits for another one that is upgrading the database (a big history can
# take minutes); failing after the busy timeout would fail every proxy a client starts then.
MIGRATION_WAIT_S = 900.0
log = logging.getLogger(__name__)

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
    # 1 -> 2: History shows one row per call with its outcome, and searches an index.
    # A call's outcome (the ask chain's answer, a deny, the detector on its result) is copied
    # onto its request row by triggers, so "one row per call" is a plain indexed read; the
    # searchable text of every row goes into a trigram FTS5 index (substring search, as LIKE).
    """
    ALTER TABLE events ADD COLUMN outcome TEXT;         -- allow | deny | ask, after the rules
    ALTER TABLE events ADD COLUMN outcome_by TEXT;      -- decided_by of that outcome
    ALTER TABLE events ADD COLUMN outcome_reason TEXT;
    ALTER TABLE events ADD COLUMN outcome_detail TEXT;  -- JSON: remember, grant_id, ...
    ALTER TABLE events ADD COLUMN result_verdict TEXT;  -- the detector on the result: warn|block
    ALTER TABLE events ADD COLUMN result_reason TEXT;
    ALTER TABLE events ADD COLUMN result_trace TEXT;
    -- 1 on the rows History lists: each tools/call request, and detector verdicts on results
    -- of other requests (resources/read, prompts/get) that have no call row to land on.
    ALTER TABLE events ADD COLUMN call_row INTEGER GENERATED ALWAYS AS (
        CASE WHEN direction = 'c2s' AND kind = 'request' AND method = 'tools/call' THEN 1
             WHEN direction = 's2c' AND verdict IS NOT NULL AND method IS NOT 'tools/call'
                  THEN 1
             WHEN direction = 'gw' AND kind = 'lifecycle' AND verdict IS NOT NULL THEN 1
        END) VIRTUAL;
    -- What finally happened to the call, as one word for the filter.
    ALTER TABLE events ADD COLUMN final TEXT GENERATED ALWAYS AS (
        CASE WHEN result_verdict = 'block' THEN 'block'
             WHEN result_verdict = 'warn' AND COALESCE(outcome, verdict) = 'allow' THEN 'warn'
             ELSE COALESCE(outcome, verdict) END) VIRTUAL;

    CREATE INDEX events_rpc ON events(session_id, rpc_id);  -- a call's frames, in order
    CREATE INDEX events_calls_ts ON events(ts) WHERE call_row = 1;
    CREATE INDEX events_calls_server ON events(server, ts) WHERE call_row = 1;
    CREATE INDEX events_calls_tool ON events(tool, ts) WHERE call_row = 1;
    CREATE INDEX events_calls_final ON events(final, ts) WHERE call_row = 1;
    CREATE INDEX events_calls_server_final ON events(server, final, ts) WHERE call_row = 1;
    CREATE INDEX events_server_verdict_ts ON events(server, verdict, ts);
    CREATE INDEX events_result_trace ON events(result_trace) WHERE result_trace IS NOT NULL;

    CREATE TRIGGER events_call_outcome AFTER INSERT ON events
    WHEN NEW.method = 'tools/call' AND NEW.rpc_id IS NOT NULL
         AND NEW.verdict IN ('allow', 'deny', 'ask')
         AND ((NEW.direction = 'gw' AND NEW.kind = 'decision')
              OR (NEW.direction = 'gw2c' AND NEW.kind IN ('response', 'error')))
    BEGIN
        UPDATE events SET outcome = NEW.verdict, outcome_by = NEW.decided_by,
            outcome_reason = NEW.reason, outcome_detail = NEW.detail
        WHERE id = (SELECT id FROM events WHERE session_id = NEW.session_id
                    AND rpc_id = NEW.rpc_id AND direction = 'c2s' AND kind = 'request'
                    AND method = 'tools/call' AND id < NEW.id ORDER BY id DESC LIMIT 1);
    END;

    CREATE TRIGGER events_call_result AFTER INSERT ON events
    WHEN NEW.method = 'tools/call' AND NEW.rpc_id IS NOT NULL AND NEW.direction = 's2c'
         AND NEW.verdict IN ('warn', 'block')
    BEGIN
        UPDATE events SET result_verdict = NEW.verdict, result_reason = NEW.reason,
            result_trace = NEW.trace_id
        WHERE id = (SELECT id FROM events WHERE session_id = NEW.session_id
                    AND rpc_id = NEW.rpc_id AND direction = 'c2s' AND kind = 'request'
                    AND method = 'tools/call' AND id < NEW.id ORDER BY id DESC LIMIT 1);
    END;

    CREATE VIRTUAL TABLE events_fts USING fts5(
        server, tool, method, reason, payload, trace_id,
        content = 'events', content_rowid = 'id', tokenize = 'trigram', columnsize = 0);
    CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN
        INSERT INTO events_fts (rowid, server, tool, method, reason, payload, trace_id)
        VALUES (NEW.id, NEW.server, NEW.tool, NEW.method, NEW.reason, NEW.payload, NEW.trace_id);
    END;
    -- Indexed columns are never updated; a delete (retention) must remove what was indexed.
    CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
        INSERT INTO events_fts (events_fts, rowid, server, tool, method, reason, payload,
                                trace_id)
        VALUES ('delete', OLD.id, OLD.server, OLD.tool, OLD.method, OLD.reason, OLD.payload,
                OLD.trace_id);
    END;
    INSERT INTO events_fts (events_fts) VALUES ('rebuild');

    -- Destinations a human said to always deny (server + tool + destination), asked no more.
    CREATE TABLE denied (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        server           TEXT NOT NULL,
        tool             TEXT NOT NULL,
        destination      TEXT NOT NULL,         -- normalised like trust.destination
        created_at       REAL NOT NULL,
        expires_at       REAL,
        revoked_at       REAL,
        decided_by       TEXT,
        note             TEXT
    );
    CREATE INDEX denied_lookup ON denied(server, tool, destination);

    -- Calls recorded before this version get their outcomes too (the latest per request id).
    UPDATE events SET outcome = o.verdict, outcome_by = o.decided_by, outcome_reason = o.reason,
        outcome_detail = o.detail
    FROM (SELECT session_id, rpc_id, verdict, decided_by, reason, detail, MAX(id)
          FROM events WHERE method = 'tools/call' AND rpc_id IS NOT NULL
          AND verdict IN ('allow', 'deny', 'ask')
          AND ((direction = 'gw' AND kind = 'decision')
               OR (direction = 'gw2c' AND kind IN ('response', 'error')))
          GROUP BY session_id, rpc_id) AS o
    WHERE events.session_id = o.session_id AND events.rpc_id = o.rpc_id
      AND events.direction = 'c2s' AND events.kind = 'request' AND events.method = 'tools/call';
    UPDATE events SET result_verdict = r.verdict, result_reason = r.reason,
        result_trace = r.trace_id
    FROM (SELECT session_id, rpc_id, verdict, reason, trace_id, MAX(id)
          FROM events WHERE method = 'tools/call' AND rpc_id IS NOT NULL AND direction = 's2c'
          AND verdict IN ('warn', 'block') GROUP BY session_id, rpc_id) AS r
    WHERE events.session_id = r.session_id AND events.rpc_id = r.rpc_id
      AND events.direction = 'c2s' AND events.kind = 'request' AND events.method = 'tools/call';
    """,
    # 2 -> 3: results the detector flagged, whose values a state-changing call may not use
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
    # 3 -> 4: the search index is filled off the write path (proxy/store/fts_index.py), not by
    # a trigger on every insert. Rows already there are indexed (v2's trigger), so the mark
    # starts at the newest row: the upgrade touches no row. Retention removes from the index
    # only what was put there.
    """
    CREATE TABLE fts_progress (
        id               INTEGER PRIMARY KEY CHECK (id = 1),
        indexed_upto     INTEGER NOT NULL       -- every events row with id <= this is indexed
    );
    INSERT INTO fts_progress (id, indexed_upto)
    VALUES (1, (SELECT COALESCE(MAX(id), 0) FROM events));
    DROP TRIGGER events_fts_insert;
    DROP TRIGGER events_fts_delete;
    CREATE TRIGGER events_fts_delete AFTER DELETE ON events
    WHEN OLD.id <= (SELECT indexed_upto FROM fts_progress)
    BEGIN
        INSERT INTO events_fts (events_fts, rowid, server, tool, method, reason, payload,
                                trace_id)
        VALUES ('delete', OLD.id, OLD.server, OLD.tool, OLD.method, OLD.reason, OLD.payload,
                OLD.trace_id);
    END;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(GatewatchError, RuntimeError):
    """The database is newer than this Gatewatch, or could not be migrated."""


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch a new database to WAL. The switch takes an exclusive lock and SQLite answers
    "database is locked" at once, without its busy handler, while another process holds the
    file (two proxies starting together on a fresh database): retry until the busy timeout."""

    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def apply_pragmas(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    _use_wal(conn)
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
    _begin_for_migration(conn)
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


def _begin_for_migration(conn: sqlite3.Connection) -> None:
    deadline = time.monotonic() + MIGRATION_WAIT_S
    said = False
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            if not said:
                log.warning("another Gatewatch process is upgrading the database; "
                            "waiting for it to finish")
                said = True


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
    private = not readonly and str(path) != ":memory:"
    if private:
        create_private(path)
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
    if private:
        tighten_files(path)  # -wal and -shm exist now (WAL mode)
    return conn


# The audit log holds what the tools read and sent: only its owner may read it.
DIR_MODE = 0o700
FILE_MODE = 0o600
SIDE_FILES = ("", "-wal", "-shm", "-journal")


def create_private(db: Path) -> None:
    """The data directory 0700 and the database 0600, created so; existing ones tightened.

    The database file is made here (not by SQLite, which follows the umask) so it never exists
    with a wider mode; SQLite gives its -wal and -shm files the database file's mode.
    """
    from proxy import paths

    parent = db.parent
    parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if parent == paths.data_dir():
        # Only Gatewatch's own directory: a --db in /tmp must not chmod /tmp.
        _tighten(parent, DIR_MODE)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE))
    tighten_files(db)


def tighten_files(db: Path) -> None:
    for suffix in SIDE_FILES:
        _tighten(Path(f"{db}{suffix}"), FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    """Drop group and other bits from a file or directory of ours (never follows a link)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid():
        return
    if stat.S_IMODE(st.st_mode) & ~mode:
        os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
