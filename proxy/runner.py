"""One proxy run from start to exit: spawn the upstream, relay until one side ends, clean up.

Shutdown order: client closes stdin → the upstream's stdin is closed, then SIGTERM, then
SIGKILL after grace periods. The upstream exits → the audit is flushed and the proxy exits with
the upstream's code. SIGINT/SIGTERM/SIGHUP → the same as a client that went away.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy import jsonrpc, upstream
from proxy.audit import AuditEvent, AuditWriter
from proxy.gate import Gate
from proxy.redact import redact_argv
from proxy.relay import MAX_PARSE, Hooks, Relay
from proxy.relay.framing import Line, read_frames
from proxy.session import Session
from proxy.stdio import open_stdin, open_stdout
from proxy.store.schema import SchemaError

log = logging.getLogger(__name__)
FIRST_REQUEST_WAIT = 10.0
DRAIN_WAIT = upstream.TERM_GRACE + upstream.KILL_GRACE + 1.0
LOAD_WAIT = 10.0  # seconds a session that ends while loading waits to pin what it listed
SWITCH_INTERVAL = 0.0005  # seconds; see run_proxy
AUDIT_FAILED = 1  # exit code when the audit database cannot be opened


@dataclass
class RunOptions:
    name: str
    argv: list[str]
    db_path: Path
    policy_path: Path | None = None
    max_parse: int = MAX_PARSE
    health_port: int | None = None


KEYRING_REF = "gatewatch-keyring:"


def upstream_env() -> dict[str, str]:
    """Our environment for the upstream (never printed or audited), with keyring refs resolved.

    A config wrapped with --secrets-to-keyring holds `gatewatch-keyring:` references instead of
    secrets; an unresolvable one means the upstream is not started (fail closed).
    """
    env = dict(os.environ)
    if any(value.startswith(KEYRING_REF) for value in env.values()):
        from proxy.clients.secrets import KeyringError, resolve_env_refs

        try:
            return resolve_env_refs(env)
        except KeyringError as exc:
            # 78: EX_CONFIG, the configuration (a keyring reference) is unusable.
            raise upstream.UpstreamStartError(f"cannot start upstream: {exc}", 78) from None
    return env


async def run_proxy(opts: RunOptions) -> int:
    # The audit writer builds rows (redaction, JSON) in a worker thread. With Python's default
    # 5 ms switch interval a frame arriving meanwhile waited up to 5 ms for the GIL (p95 of
    # 4 KB round trips: 11.6 ms); at 0.5 ms the relay gets it back promptly (p95 0.3 ms).
    sys.setswitchinterval(SWITCH_INTERVAL)
    # Handlers first: a signal during start-up must end the run in order, not as a
    # KeyboardInterrupt in the middle of spawning or opening the database.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
    session = Session(server=opts.name, command=redact_argv(opts.argv))
    audit = AuditWriter(opts.db_path, session.id, session.server)
    try:
        proc = await upstream.spawn(opts.argv, upstream_env())
    except upstream.UpstreamStartError as exc:
        return await _start_failed(session, audit, exc, opts)
    session.upstream_pid = proc.pid
    try:
        await _open_audit(audit, session)
    except (OSError, sqlite3.Error, SchemaError) as exc:
        # Fail closed: no audit, no relay. Said on stderr and to the client, not as a traceback.
        message = f"cannot open the audit database {opts.db_path}: {exc}"
        log.error("%s", message)
        await upstream.stop(proc)
        await _answer_first_request(opts, message)
        return AUDIT_FAILED
    assert proc.stdin is not None and proc.stdout is not None
    from proxy.ipc.session_link import client_fields, start_app_link

    gate = Gate()
    link = start_app_link(session, gate)

    def client_changed() -> None:
        _client_changed(audit, session)
        link.update_session(**client_fields(session))

    relay = Relay(
        session,
        gate,
        audit,
        await open_stdin(opts.max_parse),
        await open_stdout(),
        proc.stdin,
        proc.stdout,
        hooks=Hooks(
            session_changed=client_changed,
            notice=lambda event: link.notice(notice_fields(session, event)),
        ),
        max_parse=opts.max_parse,
    )
    loading = asyncio.create_task(_load_components(relay, opts, session, audit, link))

    health = None
    if opts.health_port is not None:
        from proxy.health import serve_health, session_status

        try:
            health = await serve_health(
                opts.health_port, lambda: session_status(session, lambda: proc.returncode is None)
            )
        except OSError as exc:
            log.error("health port %s: %s", opts.health_port, exc)

    c2s = asyncio.create_task(relay.pump_client(), name="client-to-server")
    s2c = asyncio.create_task(relay.pump_server(), name="server-to-client")
    stopper = asyncio.create_task(stop.wait(), name="signals")
    # The upstream's exit, even while a grandchild still holds its stdout open.
    gone = asyncio.create_task(upstream.exited(proc), name="upstream-exit")
    done, _ = await asyncio.wait({c2s, s2c, stopper, gone}, return_when=asyncio.FIRST_COMPLETED)

    if s2c in done or gone in done:
        reason = "upstream exited"
    elif c2s in done:
        reason = "client closed"
    else:
        reason = "signal"
    for task in done:
        if task not in (stopper, gone) and task.exception() is not None:
            reason = f"internal error: {task.exception()!r}"
            log.error("relay failed: %r", task.exception())

    # Record the end now: Claude Code sends SIGINT, SIGTERM 100 ms later and SIGKILL 400 ms
    # after that, sooner than a slow upstream stops. The exit code is filled in below.
    audit.sessions.ended(session.id, time.time(), None, reason)
    if reason != "upstream exited":
        relay.client_closed()
    code = await upstream.stop(proc)
    # Whatever the upstream still wrote before exiting reaches the client (and the audit).
    if not s2c.done():
        try:
            await asyncio.wait_for(s2c, DRAIN_WAIT)
        except Exception:  # a timeout, or the pump failed: stop draining either way
            s2c.cancel()
    if gate.backlog:
        # The tools/list answer did not wait for the engine; the listing it carried is still
        # pinned (trust on first use) before the session ends.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(gate.wait_ready(), LOAD_WAIT)
    for task in (c2s, stopper, gone, loading, *relay.held.values()):
        task.cancel()
    await asyncio.gather(c2s, stopper, gone, loading, *relay.held.values(), return_exceptions=True)

    if health is not None:
        health.close()
    await link.close()
    # The queue's high-water mark shows, per session, whether the audit ever held the relay up.
    stats = {"exit_code": code, "audit_high_water": audit.high_water, "audit_waited": audit.waited}
    await audit.put_wait(AuditEvent("gw", "lifecycle", reason=reason, detail=stats))
    audit.sessions.ended(session.id, time.time(), code, reason)
    await audit.close()
    return code


async def _open_audit(audit: AuditWriter, session: Session) -> None:
    await audit.start()
    audit.sessions.started(
        session.id,
        session.server,
        jsonrpc.dumps(session.command).decode(),
        session.pid,
        session.upstream_pid,
        session.started_at,
    )


async def _load_components(
    relay: Relay, opts: RunOptions, session: Session, audit: AuditWriter, link: Any
) -> None:
    gate = relay.gate
    from proxy.components import ComponentError, load_components, paused_in_db

    write = audit.writer(asyncio.get_running_loop())

    try:
        gate.paused = await asyncio.to_thread(paused_in_db, opts.db_path, session.server)
        engine, detector, settings = await asyncio.to_thread(
            load_components, session.server, session.id, opts.db_path, opts.policy_path, write
        )
    except ComponentError as exc:
        message = f"configuration error: {exc}"
    except Exception as exc:  # fail closed on anything unexpected, and say so
        message = f"could not load the decision engine: {exc!r}"
    else:
        from proxy.ask.held import install

        asker = install(relay, opts.db_path, settings, engine=engine, write=write, app_link=link)
        gate.ready(engine, detector, asker=asker)
        await asyncio.to_thread(_housekeeping, opts.db_path, settings.retention_days)
        # What is loaded now lives as long as the proxy: out of the collector's full passes.
        gc.freeze()
        return
    log.error("%s. Every tool call is denied until this is fixed.", message)
    gate.ready(broken=f"Gatewatch {message}")
    await audit.put_wait(
        AuditEvent("gw", "lifecycle", verdict="deny", contract="config", reason=message)
    )


def _housekeeping(db_path: Path, retention_days: int) -> None:
    """Off the hot path, after start: close vanished sessions, prune old history when due."""
    from proxy.paths import data_dir
    from proxy.store.database import Database
    from proxy.store.retention import prune_if_due

    try:
        db = Database.open(db_path)
        try:
            db.sessions.close_vanished()
        finally:
            db.close()
        prune_if_due(db_path, retention_days, data_dir() / "last-prune")
    except sqlite3.Error as exc:  # never fatal: the relay goes on, the next start tries again
        log.warning("tidying the audit database failed: %s", exc)


def notice_fields(session: Session, event: AuditEvent) -> dict[str, Any]:
    """A denial or a blocked result, for the app's desktop notification."""
    return {
        "server": session.server,
        "tool": event.tool,
        "verdict": event.verdict,
        "reason": event.reason,
        "decided_by": event.decided_by,  # the app stays quiet about its own human's answers
        "event_ts": event.ts,
        "trace_id": event.trace_id,
    }


def _client_changed(audit: AuditWriter, session: Session) -> None:
    info = session.client_info or {}
    audit.sessions.client_known(
        session.id,
        name=info.get("name"),
        version=info.get("version"),
        protocol_version=session.protocol_version,
        era=session.era,
        can_elicit=bool(session.can_elicit),
    )


async def _answer_first_request(opts: RunOptions, message: str) -> tuple[Any, bytes] | None:
    """Answer the client's first request with a JSON-RPC error; return it and the answer."""
    client_in = await open_stdin(opts.max_parse)
    client_out = await open_stdout()
    try:
        async with asyncio.timeout(FIRST_REQUEST_WAIT):
            async for frame in read_frames(client_in, opts.max_parse):
                if not isinstance(frame, Line):
                    continue
                try:
                    msg = jsonrpc.loads(frame.data)
                except ValueError:
                    continue
                if jsonrpc.kind_of(msg) == "request":
                    out = jsonrpc.error_response(msg.get("id"), -32000, f"gatewatch: {message}")
                    client_out.write(out)
                    await client_out.drain()
                    return msg, out
    except (TimeoutError, OSError):
        pass
    return None


async def _start_failed(
    session: Session, audit: AuditWriter, error: upstream.UpstreamStartError, opts: RunOptions
) -> int:
    """Say why on stderr, audit it, and answer the client's first request with an error."""
    message = str(error)
    log.error("%s", message)
    await _open_audit(audit, session)
    await audit.put_wait(
        AuditEvent("gw", "lifecycle", verdict="deny", contract="upstream", reason=message)
    )
    answered = await _answer_first_request(opts, message)
    if answered is not None:
        msg, out = answered
        await audit.put_wait(
            AuditEvent(
                "gw2c",
                "error",
                method=msg.get("method"),
                rpc_id=jsonrpc.id_text(msg.get("id")),
                size=len(out),
                verdict="deny",
                contract="upstream",
                reason=message,
            )
        )
    code = error.exit_code
    audit.sessions.ended(session.id, time.time(), code, "upstream failed to start")
    await audit.close()
    return code
