"""The relay over raw pipes: odd frames pass untouched, the stream survives, all is audited."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.relay_pipes import RawProxy, echo_upstream, events, wait_for

pytestmark = pytest.mark.e2e


async def test_malformed_line_is_answered_by_gatewatch_and_later_frames_work(
    db_file: Path,
) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    broken = b'{"jsonrpc": "2.0", "id": 2, "method": \n'
    try:
        assert (await proxy.request(1, "ping"))["result"] == {"ok": True}
        await proxy.send_raw(broken)
        # Gatewatch answers it with the id it could still read; the upstream never saw it
        # (it would have answered with its own parse error and id null).
        err = await proxy.recv()
        assert err["error"]["code"] == -32700 and err["id"] == 2
        assert (await proxy.request(3, "ping"))["result"] == {"ok": True}
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    rows = events(db_file)
    bad = [r for r in rows if r["kind"] == "parse_error"]
    assert [(r["direction"], r["size"], r["verdict"]) for r in bad] == [
        ("c2s", len(broken), "deny")
    ]
    assert bad[0]["payload"].startswith('{"jsonrpc": "2.0", "id": 2')
    assert [r["rpc_id"] for r in rows if r["kind"] == "response"] == ["1", "3"]
    assert not any(r["direction"] == "s2c" and r["kind"] == "error" for r in rows)


async def test_oversize_frames_are_refused_or_withheld_never_passed(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream(), "--max-frame-mb", "0.01")
    blob = "x" * 50_000 + "é✓"  # 5x the 10 KB parse limit, with multi-byte characters
    try:
        # Client → upstream: the oversize request is answered by Gatewatch, never forwarded.
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "digest", "params": {"text": blob}}
        ).encode()
        await proxy.send_raw(line + b"\n")
        refused = await proxy.recv()
        assert refused["id"] == 2 and refused["error"]["code"] == -32600
        # Upstream → client: an answer too large to scan reaches its request as an error.
        withheld = await proxy.request(1, "big", {"n": 50_000})
        assert withheld["error"]["code"] == -32001
        trace = withheld["error"]["data"]["trace_id"]
        assert (await proxy.request(3, "ping"))["result"] == {"ok": True}
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    rows = events(db_file)
    oversize = [(r["direction"], r["size"]) for r in rows if r["kind"] == "oversize"]
    assert ("c2s", len(line) + 1) in oversize
    assert [d for d, _ in oversize] == ["c2s", "s2c"]
    assert all(size > 10_000 for _, size in oversize)
    # The withheld answer is in the audit under its trace id, with its original bytes.
    kept = [r for r in rows if r["trace_id"] == trace and r["direction"] == "s2c"]
    assert len(kept) == 1 and kept[0]["payload"].startswith('{"jsonrpc": "2.0", "id": 1')
    # Nothing of the refused request reached the upstream: it never answered id 2.
    assert not any(r["direction"] == "s2c" and r["rpc_id"] == "2" for r in rows)


async def test_very_large_frame_passes(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    blob = "y" * (20 * 1024 * 1024)
    try:
        answer = await proxy.request(1, "echo", {"text": blob})
        assert len(answer["result"]["text"]) == len(blob)
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    sizes = {r["direction"]: r["size"] for r in events(db_file) if r["rpc_id"] == "1"}
    assert sizes["c2s"] > 20 * 1024 * 1024 and sizes["s2c"] > 20 * 1024 * 1024


async def test_batch_is_forwarded_whole_and_audited_per_member(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    batch = [
        {"jsonrpc": "2.0", "id": 10, "method": "alpha"},
        {"jsonrpc": "2.0", "method": "notifications/hello"},
        {"jsonrpc": "2.0", "id": 11, "method": "beta", "params": {"n": 1}},
    ]
    try:
        await proxy.send(batch)
        answers = await proxy.recv()
        assert sorted(a["id"] for a in answers) == [10, 11]
        assert (await proxy.request(12, "ping"))["result"] == {"ok": True}
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    rows = events(db_file)
    c2s = [(r["kind"], r["method"], r["rpc_id"]) for r in rows if r["direction"] == "c2s"]
    assert c2s == [
        ("request", "alpha", "10"),
        ("notification", "notifications/hello", None),
        ("request", "beta", "11"),
        ("request", "ping", "12"),
    ]
    # Each answer in the upstream's batch is matched to its request (method and latency).
    s2c = {r["rpc_id"]: r for r in rows if r["direction"] == "s2c"}
    assert {k: r["method"] for k, r in s2c.items()} == {"10": "alpha", "11": "beta", "12": "ping"}
    assert all(r["latency_ms"] > 0 for r in s2c.values())


async def test_client_disconnect_mid_call(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream("--eof-exit", "0"))
    try:
        assert (await proxy.request(1, "ping"))["result"] == {"ok": True}
        await proxy.send({"jsonrpc": "2.0", "id": 2, "method": "hold"})
        await wait_for(
            lambda: any(r["rpc_id"] == "2" for r in events(db_file)), what="call audited"
        )
        # The client vanishes with the call in flight: both pipe ends close. The upstream's late
        # answer then meets a closed pipe, which must not crash the proxy or lose the audit.
        proxy.close_stdin()
        assert proxy.proc.stdout is not None
        proxy.proc._transport.get_pipe_transport(1).close()  # type: ignore[attr-defined]
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    assert b"Traceback" not in proxy.stderr, proxy.stderr.decode()
    rows = events(db_file)
    late = [r for r in rows if r["direction"] == "s2c" and r["rpc_id"] == "2"]
    assert len(late) == 1 and late[0]["method"] == "hold" and late[0]["latency_ms"] > 0
    assert rows[-1]["kind"] == "lifecycle" and rows[-1]["reason"] == "client closed"


async def test_notifications_and_unknown_methods_pass_byte_for_byte(db_file: Path) -> None:
    proxy = await RawProxy.start(db_file, echo_upstream())
    # Odd spacing, key order and a string id: any re-serialisation would change these bytes.
    line = b'{ "params":{"z":1,"a":[1.50,2e3]},"method":"x/unknown","id":"q-1","jsonrpc":"2.0"}'
    try:
        await proxy.send_raw(line + b"\n")
        assert (await proxy.recv()) == {"jsonrpc": "2.0", "id": "q-1", "result": {"ok": True}}
        msg = {"jsonrpc": "2.0", "id": "d", "method": "digest", "params": {"raw": line.decode()}}
        sent = json.dumps(msg, indent=None, separators=(" ,", " : ")).encode()
        await proxy.send_raw(sent + b"\n")
        assert (await proxy.recv())["result"]["sha256"] == hashlib.sha256(sent).hexdigest()
        answer = await proxy.request(5, "burst", {"n": 3})
        assert answer["result"] == {"n": 3}
        progress = [n["params"]["progress"] for n in proxy.notifications]
        assert progress == [0, 1, 2]
        proxy.close_stdin()
        assert await proxy.wait() == 0
    finally:
        await proxy.kill()
    rows = events(db_file)
    notes = [r for r in rows if r["kind"] == "notification" and r["direction"] == "s2c"]
    assert [r["method"] for r in notes] == ["notifications/progress"] * 3
