"""Profile `gatewatch run` serving tools/call echo calls of one size: where each call's time goes.

    .venv/bin/python bench/call_profile.py [--size 65536] [--calls 300] [--top 40]

Runs the proxy under cProfile (in the proxy process itself, `python -m cProfile -m proxy run`)
with the relay benchmark's upstream and payloads, sends the calls one at a time after a warm-up,
and prints the functions by cumulative time with their call counts per tools/call. cProfile
slows Python code down evenly, so read shares and counts, not absolute times. With `--gc`, no
profiler: the garbage collector's passes per generation during the run (bench/gc_passes.py),
their count, total and longest pause.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.payloads import KINDS  # noqa: E402
from bench.relay_bench import Client, call_line, call_texts, refused, upstream_cmd  # noqa: E402

WARM = 200  # calls before --gc counts the collector's passes (start-up and first calls)


async def drive(
    cmd: list[str], env: dict[str, str], size: int, calls: int, kind: str
) -> tuple[int, float]:
    """Refused calls, and the wall-clock time the warm-up calls were done."""
    kinds = KINDS if kind == "mixed" else (kind,)
    texts = call_texts(size, calls, kinds)
    client, _, _ = await Client.start(cmd, env)
    refusals, warm = 0, 0.0
    try:
        for i in range(calls):
            refusals += refused(await client.roundtrip(call_line(i, texts[i])))
            if i + 1 == WARM:
                warm = time.time()
    finally:
        await client.close()
    return refusals, warm


def gc_report(out: Path, warm: float, calls: int) -> None:
    seen = json.loads(out.read_text())
    for gen in range(3):
        took = [d for start, g, d in seen["passes"] if g == gen and start >= warm]
        print(f"  generation {gen}: {len(took)} passes, {sum(took) * 1000:.1f} ms in all, the "
              f"longest {max(took, default=0) * 1000:.1f} ms")
    print(f"  {calls} calls; tracked at the end {seen['tracked']} objects, frozen {seen['frozen']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=65536)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--kind", default="mixed", choices=("mixed", *KINDS))
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--detector-off", action="store_true",
                        help="settings.yaml turns the detector off: what the call costs outside it")
    parser.add_argument("--save", type=Path, help="keep the raw profile (pstats) here")
    parser.add_argument("--gc", action="store_true",
                        help="no profiler: the garbage collector's passes during the run")
    args = parser.parse_args()
    if args.gc and args.calls <= WARM:
        parser.error(f"--gc counts the passes after the first {WARM} calls: give --calls more")
    with tempfile.TemporaryDirectory(prefix="gw-profile-") as tmp:
        env = {**os.environ, "GATEWATCH_HOME": str(Path(tmp) / "home")}
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        if args.detector_off:
            config = Path(tmp) / "home" / "config"
            config.mkdir(parents=True)
            (config / "settings.yaml").write_text("detector: false\n")
        out = Path(tmp) / ("gc.json" if args.gc else "proxy.prof")
        runner = ([str(ROOT / "bench" / "gc_passes.py"), str(out)] if args.gc
                  else ["-m", "cProfile", "-o", str(out), "-m", "proxy"])
        cmd = [sys.executable, *runner, "run", "--name", "bench", "--db",
               str(Path(tmp) / "gw.db"), "--", *upstream_cmd()]
        refusals, warm = asyncio.run(drive(cmd, env, args.size, args.calls, args.kind))
        if args.gc:
            print(f"{args.calls} tools/call of {args.size} B ({args.kind}), {refusals} refused; "
                  f"the garbage collector's passes after the first {WARM}:")
            gc_report(out, warm, args.calls - WARM)
            return 0
        stats = pstats.Stats(str(out))
        if args.save is not None:
            stats.dump_stats(str(args.save))
        print(f"{args.calls} tools/call of {args.size} B ({args.kind}), {refusals} refused; "
              f"ncalls / {args.calls} = calls per tools/call")
        stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
