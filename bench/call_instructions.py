"""Instructions per tools/call inside Gatewatch's components: a figure other load cannot move.

    .venv/bin/python bench/call_instructions.py [--size 4096 ...] [--calls 24]
        [--base [NAME=]DIR ...] [--steps call|detector|send|relay] [--warm 40]

Runs, under valgrind (callgrind, instruction counts only), the steps the proxy runs on an echo
call (bench/call_components.py builds them: the engine's decision with its argument scans,
taint of the result, the detector's result scan) over distinct windows of every payload kind,
once sending `--calls` calls per kind and once only making them, and prints the difference per
call: the setup (imports, packs, the model, making the calls' frames) cancels out. Each tree
(this one, and every `--base`, a `git archive` copy of another commit) runs with its own code;
a tree without a built extension runs the detector's Python path. `--steps send` counts
instead the engine's decision of a sending tool's call whose body is the payload (its values
and links checked against a session that read a flagged and clean documents). Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _work(size: int, calls: int, run: bool, steps: str) -> None:
    """In the valgrind child, with the code of the tree in GW_TREE: `calls` calls per payload
    kind made, and sent through the steps when `run` (the difference is the calls' cost)."""
    sys.path.insert(0, os.environ["GW_TREE"])
    if steps.startswith("relay"):
        import asyncio

        asyncio.run(_work_relay(Path(os.environ["GATEWATCH_HOME"]), size, calls,
                                int(os.environ.get("GW_WARM", "40")), run, steps))
        return
    from bench.call_components import _call, _upstream_tools
    from bench.payloads import KINDS
    from proxy.components import load_components

    home = Path(os.environ["GATEWATCH_HOME"])
    if steps == "send":
        _work_send(home, size, calls, run)
        return
    engine, detector, _ = load_components("bench", "s1", home / "c.db", None, lambda *a: None)
    engine.tools_listed(_upstream_tools())
    # Valgrind runs the code ~50x slower: a 64 KB scan would pass its wall-clock budget and
    # stop early, so the faster tree would count more work. Every scan runs whole here.
    detector.time_budget_ms = 1e9

    def call(c: Any) -> None:
        if steps == "detector":  # the argument scans (as engine.decide runs them), the result's
            detector.inspect_arguments("echo", c.args)
            detector.scan_text(c.args["text"])
        else:
            engine.decide("echo", c.args)
            engine.result_seen("echo", c.result, c.args)
        detector.inspect_result("tools/call", c.result)

    for c in [_call(kind, size, 1) for kind in KINDS]:
        call(c)  # lazy loads (the model, the repair memo's first words) out of the count
    todo = [_call(kind, size, 5 + i) for i in range(calls) for kind in KINDS]
    for c in todo if run else ():
        call(c)


SEND_TOOLS = [
    {"name": "send_email", "description": "Send an e-mail.", "inputSchema": {
        "type": "object", "properties": {"to": {"type": "array"}, "body": {"type": "string"}}}},
    {"name": "read_document", "description": "Read a document.", "inputSchema": {}},
]
SEND_POLICY = ("servers:\n  mail:\n    tools:\n"
               "      send_email: {exfiltrating: true, sink_params: [to]}\n")


def _work_send(home: Path, size: int, calls: int, run: bool) -> None:
    """engine.decide of a send whose body is the payload (its links checked against taint, its
    values against flagged results), after a session that read a flagged and clean documents."""
    from bench.payloads import KINDS, payload
    from proxy.engine import Engine
    from proxy.store.database import Database
    from proxy.store.schema import connect

    policy = home / "policy.yaml"
    policy.write_text(SEND_POLICY)
    engine = Engine.create("mail", "s1", Database(connect(home / "s.db")), policy_path=policy)
    engine.tools_listed(SEND_TOOLS)
    for i, kind in enumerate(KINDS):  # what the session read: one result flagged
        result = {"content": [{"type": "text", "text": payload(kind, 4096, 60 + i)}]}
        engine.result_seen("read_document", result)
        engine.result_inspected("read_document", result, "warn" if i == 3 else "pass")

    def send(body: str) -> None:
        engine.decide("send_email", {"to": ["bob@corp.example"], "body": body})

    for kind in KINDS:
        send(payload(kind, size, 1))
    todo = [payload(kind, size, 5 + i) for i in range(calls) for kind in KINDS]
    for body in todo if run else ():
        send(body)


# ---- --steps relay: the path outside the detector ------------------------------------------

RELAY_STEPS = ("relay", "relay:decide", "relay:taint", "relay:rows", "relay:write")
RELAY_BATCH = 200  # audit items per batch: fixed by count, not by the clock (valgrind is slow)


class _Answers:
    """The detector, answering from what it said during the setup (by text): the count holds
    none of its work. Every other attribute is the real detector's."""

    def __init__(self, detector: Any) -> None:
        self._detector = detector
        self.classifier = None
        self._args: dict[tuple[int, str, str], tuple[str, Any]] = {}
        self._text: dict[tuple[int, str, str], tuple[str, Any]] = {}
        self._result: dict[tuple[int, str, str], tuple[str, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._detector, name)

    @staticmethod
    def _key(text: str) -> tuple[int, str, str]:  # cheap: hashing a 64 KB text costs a scan
        return len(text), text[:40], text[-40:]

    def learn(self, args: dict[str, Any], result: dict[str, Any]) -> None:
        text, shown = args["text"], result["content"][0]["text"]
        d = self._detector
        self._args[self._key(text)] = (text, d.inspect_arguments("echo", args))
        self._text[self._key(text)] = (text, d.scan_text(text))
        self._result[self._key(shown)] = (shown, d.inspect_result("tools/call", result))

    @staticmethod
    def _answer(memo: dict[tuple[int, str, str], tuple[str, Any]], text: str) -> Any:
        seen, answer = memo.get(_Answers._key(text), (None, None))
        return answer if seen == text else None

    def inspect_arguments(self, tool: str, args: dict[str, Any]) -> Any:
        text = args.get("text")
        known = self._answer(self._args, text) if isinstance(text, str) else None
        return known or self._detector.inspect_arguments(tool, args)

    def scan_text(self, text: str) -> Any:  # a tool's description is scanned for real
        return self._answer(self._text, text) or self._detector.scan_text(text)

    def inspect_result(self, method: str, result: dict[str, Any]) -> Any:
        text = result["content"][0]["text"]
        return self._answer(self._result, text) or self._detector.inspect_result(method, result)


class _ToClient:
    """The client's end of the proxy's stdout: each line wakes the waiting caller."""

    def __init__(self) -> None:
        self.waiting: Any = None
        self.transport = None

    def write(self, data: bytes) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(data)

    async def drain(self) -> None:
        return None


class _ToUpstream:
    """The echo upstream (tests/upstreams/bench_echo.py's answers), in process."""

    def __init__(self, reader: Any, echo: Any) -> None:
        self.reader = reader
        self.echo = echo
        self.transport = None

    def write(self, data: bytes) -> None:
        for line in data.splitlines(keepends=True):
            out = self.echo.fast_echo(line)
            if out is None:
                msg = json.loads(line)
                if "id" not in msg or "method" not in msg:
                    continue  # notifications get no answer
                out = json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                  "result": self.echo.answer(msg)},
                                 separators=(",", ":")).encode() + b"\n"
            self.reader.feed_data(out)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.reader.feed_eof()


def _echo_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_echo", Path(os.environ["GW_TREE"]) / "tests" / "upstreams" / "bench_echo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _work_relay(home: Path, size: int, calls: int, warm: int, run: bool,
                      step: str) -> None:
    """A proxy session in process: handshake, `warm` calls per kind, then `calls` per kind
    counted through the whole path (`relay`) or through one step alone (`relay:STEP`)."""
    import asyncio

    from bench.payloads import KINDS, payload
    from bench.relay_bench import call_line
    from proxy import jsonrpc
    from proxy.audit import AuditWriter
    from proxy.components import scanners, user_detector
    from proxy.engine import Engine
    from proxy.gate import Gate
    from proxy.relay import Relay
    from proxy.session import Session
    from proxy.store.database import Database

    db_path = home / "gatewatch.db"
    session = Session(server="bench", command=["bench-echo"])
    audit = AuditWriter(db_path, session.id, session.server, window=1e9,
                        max_batch=RELAY_BATCH, index_idle=1e9)
    await audit.start()
    loop = asyncio.get_running_loop()
    detector = user_detector(db_path)
    # Valgrind runs the code ~50x slower: every scan runs whole (as the other modes do).
    detector.time_budget_ms = 1e9
    answers = _Answers(detector)
    engine = Engine.create("bench", session.id, Database.open(db_path, write=audit.writer(loop)),
                           **scanners(answers))
    gate = Gate(engine, answers)
    client_in = asyncio.StreamReader()
    upstream_out = asyncio.StreamReader()
    to_client = _ToClient()
    relay = Relay(session, gate, audit, client_in, to_client,  # type: ignore[arg-type]
                  _ToUpstream(upstream_out, _echo_module()), upstream_out)  # type: ignore[arg-type]
    pumps = [asyncio.create_task(relay.pump_client()), asyncio.create_task(relay.pump_server())]
    next_id = iter(range(1, 1 << 30))

    async def send(line: bytes) -> bytes:
        to_client.waiting = loop.create_future()
        client_in.feed_data(line)
        return bytes(await to_client.waiting)

    def request(method: str, params: dict[str, Any]) -> bytes:
        return jsonrpc.dumps({"jsonrpc": "2.0", "id": next(next_id), "method": method,
                              "params": params}) + b"\n"

    await send(request("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}))
    client_in.feed_data(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await send(request("tools/list", {}))

    def texts(first: int, count: int) -> list[str]:
        return [payload(kind, size, first + i) for i in range(count) for kind in KINDS]

    warm_texts, todo = texts(1000, warm), texts(5, calls)
    for text in warm_texts + todo:  # the detector's answers, computed here, out of the count
        answers.learn({"text": text}, {"content": [{"type": "text", "text": text}],
                                       "isError": False})

    async def through(batch: list[str]) -> None:
        for text in batch:
            out = await send(call_line(next(next_id), text))
            assert b'"isError":false' in out, out[:300]

    await through(warm_texts)
    if step == "relay":
        if run:
            await through(todo)
    elif step in ("relay:decide", "relay:taint"):
        frames = [jsonrpc.loads(call_line(next(next_id), text)) for text in todo]
        pairs = [(msg["params"]["arguments"],
                  jsonrpc.loads(jsonrpc.dumps({"content": [{"type": "text", "text": text}],
                                               "isError": False})))
                 for msg, text in zip(frames, todo, strict=True)]
        for args, result in pairs if run else ():
            if step == "relay:decide":
                gate.decide("echo", args)
            else:  # as the relay's work after the forward does it
                gate.result_seen("echo", result, args)
                gate.result_inspected("echo", result, "pass")
    else:  # the audit's items for the counted calls, caught on their way to the queue
        caught: list[Any] = []
        enqueue = audit._enqueue
        audit._enqueue = caught.append  # type: ignore[method-assign]
        await through(todo)
        audit._enqueue = enqueue  # type: ignore[method-assign]
        batches = [caught[at:at + RELAY_BATCH] for at in range(0, len(caught), RELAY_BATCH)]
        if step == "relay:rows":
            for batch in batches if run else ():
                audit._rows(batch)
        else:
            from proxy.store.writer import _open, _write_steps

            db = await asyncio.to_thread(_open, db_path)
            steps = [audit._rows(batch) for batch in batches]
            for batch_steps in steps if run else ():
                _write_steps(db, batch_steps)
            db.close()
    client_in.feed_eof()  # the client goes, then the upstream
    await pumps[0]
    upstream_out.feed_eof()
    await pumps[1]
    await audit.close()


def _npm_for(root: Path) -> None:
    """A `git archive` base tree has no tests/npm/node_modules, where bench/payloads.py finds
    its minified JavaScript: link this checkout's, so both trees read the same payloads."""
    target = root / "tests" / "npm" / "node_modules"
    mine = ROOT / "tests" / "npm" / "node_modules"
    if root != ROOT and not target.exists() and mine.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(mine, target_is_directory=True)


def _count(root: Path, size: int, calls: int, run: bool, steps: str, warm: int = 40) -> int:
    _npm_for(root)
    with tempfile.TemporaryDirectory(prefix="gw-instr-") as home:
        out = Path(home) / "callgrind.out"
        env = {**os.environ, "GATEWATCH_HOME": home, "GW_TREE": str(root),
               "PYTHONPATH": str(root), "PYTHONHASHSEED": "0", "GW_WARM": str(warm)}
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, str(Path(__file__).resolve()), "--work", str(size), str(calls),
             "run" if run else "make", steps],
            env=env, capture_output=True, text=True, timeout=3600,
        )
        if done.returncode != 0:  # say why, instead of CalledProcessError's exit status alone
            raise SystemExit(f"bench: the valgrind child for {root} exited {done.returncode}:\n"
                             + "\n".join(done.stderr.splitlines()[-15:]))
        found = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        assert found, "no summary line in the callgrind output"
        return int(found.group(1))


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--work":
        _work(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "run", sys.argv[5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs="+", default=[4096])
    parser.add_argument("--calls", type=int, default=24, help="calls per payload kind")
    parser.add_argument("--base", action="append", default=[], metavar="[NAME=]DIR")
    parser.add_argument("--steps", choices=["call", "detector", "send", "relay"],
                        default="call",
                        help="detector: only its scans (arguments and result), no engine/taint; "
                             "send: engine.decide of send_email(to, body=the payload); "
                             "relay: the proxy's path outside the detector, by step")
    parser.add_argument("--warm", type=int, default=40,
                        help="with --steps relay: calls per kind through the path first")
    parser.add_argument("--only", action="store_true",
                        help="with --steps relay: the whole path only, not each step")
    parser.add_argument("--relay-steps", default="", metavar="STEP,...",
                        help="with --steps relay: only these of " + ", ".join(RELAY_STEPS))
    args = parser.parse_args()
    roots = {"this": ROOT}
    for spec in args.base:
        name, _, where = spec.rpartition("=")
        roots[name or "base"] = Path(where).resolve()
    kinds = 6
    if args.steps == "relay":
        return _relay_table(args, roots, kinds)
    what = {"detector": "the detector's scans of arguments and result",
            "send": "engine.decide of a send with the payload as its body"}.get(
        args.steps, "engine.decide + result_seen + inspect_result")
    print(f"instructions per call ({what}), {args.calls} calls per kind")
    for size in args.size:
        cells = []
        for name, root in roots.items():
            none = _count(root, size, args.calls, run=False, steps=args.steps)
            some = _count(root, size, args.calls, run=True, steps=args.steps)
            cells.append(f"{name} {(some - none) / (args.calls * kinds) / 1e6:.2f} M")
        print(f"{size:>8} B: " + " | ".join(cells))
    return 0


def _relay_table(args: argparse.Namespace, roots: dict[str, Path], kinds: int) -> int:
    steps = RELAY_STEPS[:1] if args.only else RELAY_STEPS
    if args.relay_steps:
        steps = tuple(s for s in RELAY_STEPS if s in args.relay_steps.split(","))
    names = {"relay": "whole path", "relay:decide": "  engine decision",
             "relay:taint": "  taint step", "relay:rows": "  audit row text",
             "relay:write": "  audit SQL"}
    print(f"instructions per echo tools/call outside the detector (M), {args.calls} calls per "
          f"kind after {args.warm} per kind")
    for size in args.size:
        print(f"{size} B: " + " | ".join(roots))
        got: dict[str, dict[str, float]] = {}
        for step in steps:
            for name, root in roots.items():
                none = _count(root, size, args.calls, False, step, args.warm)
                some = _count(root, size, args.calls, True, step, args.warm)
                got.setdefault(step, {})[name] = (some - none) / (args.calls * kinds) / 1e6
            print(f"  {names[step]:<22}" + "".join(f"{got[step][n]:9.3f}" for n in roots),
                  flush=True)
        if steps == RELAY_STEPS:
            rest = {n: got["relay"][n] - sum(got[s][n] for s in steps[1:]) for n in roots}
            print(f"  {'  the rest (relay)':<22}" + "".join(f"{rest[n]:9.3f}" for n in roots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
