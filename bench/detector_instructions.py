"""Instructions per echo call in the detector's three passes, once a session is warm.

    .venv/bin/python bench/detector_instructions.py [--size 200 4096 ...] [--calls 16]
        [--warm 300] [--base [NAME=]DIR ...]

An echo call costs the detector three passes: the argument rules and the result rules over the
argument text (the engine's inspect_arguments and scan_text) and the result rules over the
result. Under valgrind (callgrind, instruction counts only), `--warm` distinct calls per
payload kind (bench/payloads.py) are sent first, uncounted, so the per-word memos and the rule
sets' automata are as a long-running proxy has them; then `--calls` other calls per kind are
counted, each pass alone (collection is switched on inside `operator.call` only), and the
instructions per call printed per tree (this one and every `--base`, a `git archive` copy of
another commit with its extension built or copied in). `bench/call_instructions.py` counts the
first calls of a process instead: there most of a small call is the automata being built.
Needs valgrind; the scan budget is lifted so that no scan stops early under it.
"""

from __future__ import annotations

import argparse
import operator
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = 6


def _work(size: int, calls: int, warm: int) -> None:
    """In the valgrind child, with the code of the tree in GW_TREE."""
    sys.path.insert(0, os.environ["GW_TREE"])
    from bench.call_components import _call
    from bench.payloads import KINDS as NAMES
    from proxy.components import load_components

    home = Path(os.environ["GATEWATCH_HOME"])
    _engine, detector, _ = load_components("bench", "s1", home / "c.db", None, lambda *a: None)
    detector.time_budget_ms = 1e9

    def passes(args: dict[str, str], result: dict[str, object]) -> None:
        detector.inspect_arguments("echo", args)
        detector.scan_text(args["text"])
        detector.inspect_result("tools/call", result)

    for c in [_call(kind, size, 10_000 + i) for i in range(warm) for kind in NAMES]:
        passes(c.args, c.result)
    for c in [_call(kind, size, 5 + i) for i in range(calls) for kind in NAMES]:
        operator.call(passes, c.args, c.result)  # counted: see --toggle-collect below


def _count(root: Path, size: int, calls: int, warm: int) -> int:
    target = root / "tests" / "npm" / "node_modules"  # the minified JavaScript payloads
    mine = ROOT / "tests" / "npm" / "node_modules"
    if root != ROOT and not target.exists() and mine.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(mine, target_is_directory=True)
    with tempfile.TemporaryDirectory(prefix="gw-instr-") as home:
        out = Path(home) / "callgrind.out"
        env = {**os.environ, "GATEWATCH_HOME": home, "GW_TREE": str(root),
               "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--toggle-collect=_operator_call", sys.executable, str(Path(__file__).resolve()),
             "--work", str(size), str(calls), str(warm)],
            env=env, capture_output=True, text=True, timeout=7200,
        )
        if done.returncode != 0:
            raise SystemExit(f"bench: the valgrind child for {root} exited {done.returncode}:\n"
                             + "\n".join(done.stderr.splitlines()[-15:]))
        found = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        assert found, "no summary line in the callgrind output"
        return int(found.group(1))


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--work":
        _work(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs="+", default=[200, 4096])
    parser.add_argument("--calls", type=int, default=16, help="counted calls per payload kind")
    parser.add_argument("--warm", type=int, default=300, help="uncounted calls per kind first")
    parser.add_argument("--base", action="append", default=[], metavar="[NAME=]DIR")
    args = parser.parse_args()
    roots = {"this": ROOT}
    for spec in args.base:
        name, _, where = spec.rpartition("=")
        roots[name or "base"] = Path(where).resolve()
    print(f"instructions per echo call in the detector's three passes, {args.calls} calls per "
          f"kind after {args.warm} per kind")
    for size in args.size:
        per_call = {name: _count(root, size, args.calls, args.warm) / (args.calls * KINDS)
                    for name, root in roots.items()}
        cells = [f"{name} {count / 1e6:.3f} M" for name, count in per_call.items()]
        print(f"{size:>8} B: " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
