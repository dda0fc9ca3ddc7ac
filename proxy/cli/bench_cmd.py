"""`gatewatch bench`: run the benchmarks kept under bench/ and print (or collect) their figures.

Each benchmark is its own script so it can also be run alone; this command runs them one after
another in a fresh GATEWATCH_HOME, with their `--json` option where they have one. Benchmarks
drive real processes (the relay benchmark uses a test upstream), so they run from a checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# name -> (script, arguments for a full run, arguments for --quick, has --json)
BENCHMARKS: dict[str, tuple[str, list[str], list[str], bool]] = {
    "relay": (
        "relay_bench.py",
        [],
        ["--scale", "0.2", "--rounds", "1", "--repeat", "3", "--sizes", "200,4096,65536"],
        True,
    ),
    "components": ("call_components.py", [], ["--repeat", "2"], True),
    "engine": ("engine_bench.py", [], ["--calls", "500"], False),
    "detector": ("detector_bench.py", [], ["--quick"], True),
    "history": ("app_history_bench.py", [], ["--rows", "100000"], False),
    "audit": ("audit_bench.py", [], ["--calls", "100", "--rounds", "1"], False),
    "ask": ("ask_bench.py", [], ["--n", "300"], False),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"which ones (default: all of {', '.join(BENCHMARKS)})",
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a first look")
    parser.add_argument("--json", action="store_true", help="one JSON object with every result")


def bench_dir() -> Path | None:
    from proxy.paths import packs_dir

    candidate = packs_dir().parent / "bench"
    return candidate if (candidate / "relay_bench.py").exists() else None


def run(args: argparse.Namespace) -> int:
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        print(
            f"gatewatch bench: unknown benchmark {', '.join(unknown)}; "
            f"choose from {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return 2
    where = bench_dir()
    if where is None:
        print(
            "gatewatch bench runs from a source checkout (it drives test upstreams that an "
            "installed Gatewatch does not ship): `python -m proxy bench` in the repository",
            file=sys.stderr,
        )
        return 2
    results: dict[str, object] = {}
    worst = 0
    for name in args.names or list(BENCHMARKS):
        script, full, quick, has_json = BENCHMARKS[name]
        argv = [sys.executable, str(where / script), *(quick if args.quick else full)]
        if args.json and has_json:
            argv.append("--json")
        if not args.json:
            print(f"\n=== {name} ({script})", flush=True)
        with tempfile.TemporaryDirectory(prefix="gatewatch-bench-") as home:
            env = {
                **os.environ,
                "GATEWATCH_HOME": home,
                "PYTHONPATH": os.pathsep.join(
                    [str(where.parent), os.environ.get("PYTHONPATH", "")]
                ),
            }
            done = subprocess.run(
                argv, env=env, cwd=where.parent, text=True, capture_output=args.json
            )
        worst = max(worst, done.returncode)
        if args.json:
            results[name] = _parsed(done.stdout, has_json) | {"exit_code": done.returncode}
    if args.json:
        print(json.dumps(results, indent=2))
    return 1 if worst else 0


def _parsed(stdout: str, has_json: bool) -> dict[str, object]:
    if has_json:
        try:
            value = json.loads(stdout)
            return value if isinstance(value, dict) else {"result": value}
        except ValueError:
            pass
    return {"text": stdout}
