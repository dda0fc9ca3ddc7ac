"""Instructions per tools/call inside Gatewatch's components: a figure other load cannot move.

    .venv/bin/python bench/call_instructions.py [--size 4096 ...] [--calls 24]
        [--base [NAME=]DIR ...] [--steps call|detector|send]

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


def _npm_for(root: Path) -> None:
    """A `git archive` base tree has no tests/npm/node_modules, where bench/payloads.py finds
    its minified JavaScript: link this checkout's, so both trees read the same payloads."""
    target = root / "tests" / "npm" / "node_modules"
    mine = ROOT / "tests" / "npm" / "node_modules"
    if root != ROOT and not target.exists() and mine.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(mine, target_is_directory=True)


def _count(root: Path, size: int, calls: int, run: bool, steps: str) -> int:
    _npm_for(root)
    with tempfile.TemporaryDirectory(prefix="gw-instr-") as home:
        out = Path(home) / "callgrind.out"
        env = {**os.environ, "GATEWATCH_HOME": home, "GW_TREE": str(root),
               "PYTHONPATH": str(root)}
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
    parser.add_argument("--steps", choices=["call", "detector", "send"], default="call",
                        help="detector: only its scans (arguments and result), no engine/taint; "
                             "send: engine.decide of send_email(to, body=the payload)")
    args = parser.parse_args()
    roots = {"this": ROOT}
    for spec in args.base:
        name, _, where = spec.rpartition("=")
        roots[name or "base"] = Path(where).resolve()
    kinds = 6
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


if __name__ == "__main__":
    sys.exit(main())
