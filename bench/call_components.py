"""Where a tools/call's time goes inside Gatewatch, step by step, per payload kind.

    .venv/bin/python bench/call_components.py [--size 65536 ...] [--repeat 5] [--json]
        [--base [NAME=]DIR ... [--rounds 3]]

Builds the proxy's components as `gatewatch run` does (engine with its packs, detector, audit
row building) in this process and times, for one echo call of each payload kind
(bench/payloads.py), every step the proxy runs on it: parsing the request, the engine's
decision (with its argument scans), parsing the result, taint extraction from the result, the
detector's result scan (and the learned layer's share of it), and building the two audit rows
(redaction and JSON). Best of `--repeat` per step, in milliseconds, without profiler overhead;
each repetition is a distinct window of the payload (no per-text cache answers it). The first
step to read a text (engine.decide) also pays the detector's per-word repair memo for words
not seen before, which the steps after it find warm.

`--base DIR` (a `git archive` copy of another commit) runs the same steps against that tree's
code too, `--rounds` times each, alternating (bench/ab.py), and prints each step's range over
the rounds for this tree and the base side by side.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ab import interleaved, span, trees, use_root  # noqa: E402
from bench.payloads import KINDS, payload  # noqa: E402
from bench.relay_bench import call_line  # noqa: E402


def _upstream_tools() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(
        "bench_echo", ROOT / "tests" / "upstreams" / "bench_echo.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.TOOLS["tools"])


def best_ms(fn: Callable[[Any], Any], inputs: list[Any]) -> float:
    """The best time of `fn` over `inputs`, one call each: every call gets a distinct text, so
    no per-text cache (taint's, the engine's) answers a repeat for free."""
    times = []
    for item in inputs:
        t0 = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - t0) * 1000)
    return min(times)


def steps_for(size: int, repeat: int) -> dict[str, dict[str, float]]:
    from proxy.components import load_components

    home = Path(os.environ["GATEWATCH_HOME"])
    db = home / "components.db"
    engine, detector, _settings = load_components("bench", "s1", db, None, lambda *a: None)
    engine.tools_listed(_upstream_tools())
    out: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        out[kind] = _steps(kind, size, repeat, engine, detector)
    return out


def _steps(kind: str, size: int, repeat: int, engine: Any, detector: Any) -> dict[str, float]:
    from proxy import jsonrpc
    from proxy.audit import row_text

    calls = [_call(kind, size, 5 + i) for i in range(repeat)]
    return {
        "parse request": best_ms(lambda c: jsonrpc.loads(c.request), calls),
        "engine.decide": best_ms(lambda c: engine.decide("echo", c.args), calls),
        "  argument scans in it": best_ms(
            lambda c: (detector.inspect_arguments("echo", c.args),
                       detector.scan_text(c.args["text"])),
            calls,
        ),
        "parse result": best_ms(lambda c: jsonrpc.loads(c.response), calls),
        "taint (result_seen)": best_ms(lambda c: engine.result_seen("echo", c.result, c.args),
                                       calls),
        "detector.inspect_result": best_ms(
            lambda c: detector.inspect_result("tools/call", c.result), calls
        ),
        "  learned layer in it": _model_ms(detector, calls),
        "audit rows (2)": best_ms(lambda c: (row_text(c.row), row_text(c.answer)), calls),
    }


@dataclass(frozen=True)
class _Call:
    request: bytes
    args: dict[str, Any]
    result: dict[str, Any]
    response: bytes
    row: Any  # the two audit events (proxy.audit.AuditEvent)
    answer: Any


def _call(kind: str, size: int, seed: int) -> _Call:
    """One echo call's frames for a distinct window of the payload kind."""
    from proxy import jsonrpc
    from proxy.audit import AuditEvent

    text = payload(kind, size, seed)
    request = call_line(7, text)
    msg = jsonrpc.loads(request)
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    response = jsonrpc.dumps({"jsonrpc": "2.0", "id": 7, "result": result})
    row = AuditEvent("c2s", "request", method="tools/call", payload=msg)
    answer = AuditEvent("s2c", "response", method="tools/call", payload=jsonrpc.loads(response))
    return _Call(request, msg["params"]["arguments"], result, response, row, answer)


def _model_ms(detector: Any, calls: list[_Call]) -> float:
    """The learned layer's share of a result scan: its score of the result's prepared views."""
    from proxy.detector.model import shipped_model

    if not detector.use_model:
        return 0.0
    model = shipped_model().model
    inputs = [detector.model_inputs(c.args["text"]) for c in calls]
    return best_ms(lambda found: model.score(*found), inputs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs="+", default=[65536])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--base", action="append", default=[], metavar="[NAME=]DIR")
    parser.add_argument("--rounds", type=int, default=3, help="with --base: runs per tree")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # import proxy from this tree
    args = parser.parse_args()
    if args.base:
        return _ab(args)
    use_root(args.root)
    with tempfile.TemporaryDirectory(prefix="gw-components-") as home:
        os.environ["GATEWATCH_HOME"] = home
        tables = {str(size): steps_for(size, args.repeat) for size in args.size}
    if args.json:
        print(json.dumps(tables, indent=2))
        return 0
    for size, table in tables.items():
        steps = list(next(iter(table.values())))
        print(f"ms per step for one {size} B echo tools/call (best of {args.repeat})")
        print(f"{'step':<28}" + "".join(f"{k:>9}" for k in KINDS))
        for step in steps:
            print(f"{step:<28}" + "".join(f"{table[k][step]:9.2f}" for k in KINDS))
    return 0


def _ab(args: argparse.Namespace) -> int:
    roots = trees(args.base)
    sizes = [str(size) for size in args.size]
    runs = interleaved(Path(__file__), roots, ["--size", *sizes, "--repeat", str(args.repeat)],
                       args.rounds)
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    names = list(roots)
    print(f"ms per step (best of {args.repeat}), range over {args.rounds} rounds: "
          + " | ".join(names))
    for size in sizes:
        first = runs[names[0]][0][size]
        print(f"\n{size} B")
        print(f"{'step':<24}" + "".join(f"{k:>26}" for k in KINDS))
        for step in first[KINDS[0]]:
            cells = [" | ".join(span([run[size][k][step] for run in runs[name]], 3)
                                for name in names) for k in KINDS]
            print(f"{step:<24}" + "".join(f"{c:>26}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
