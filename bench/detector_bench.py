"""Speed of the injection detector against the full built-in packs.

    .venv/bin/python bench/detector_bench.py [--json] [--quick] [--views]
    .venv/bin/python bench/detector_bench.py --kinds [--fresh] [--sizes 200 4096 ...]
        [--base [NAME=]DIR]

Reports the model file's size and load time; for tool results of 1 KB, 10 KB, 100 KB and 1 MB
of ordinary text (licence prose, JSON, code and logs in turn): scan time p50/p95/p99 and
throughput (rules and the learned layer), and the rules-only p50 beside it; then hostile 1 MB
inputs (backtracking bait) against the time budget and as a ratio to the ordinary 1 MB median
measured in the same run; then the cost of importing proxy.detector and of load_detector(),
each against a baseline from the same run.

`--views` instead times the detector alone on each payload kind of bench/payloads.py at 4 KB,
64 KB and 1 MB, with the learned layer's scorer as it is and as it was (every view scored whole:
tests/reference_scorer.py), rounds interleaved: p50 wall and CPU time, whether the scan finished
inside the time budget, and whether both scorers gave the same model score.

`--kinds` times the detector on each payload kind at 200 B, 4 KB, 64 KB and 1 MB with a budget
no scan reaches, so every run does the whole scan: inspect_result's p50 wall and CPU time, and
(`*`) where the p50 wall time is over the shipped budget. With `--base DIR` (a `git archive`
copy of another commit) the same runs against that tree's code, `--rounds` times each,
alternating (bench/ab.py): ranges over the rounds side by side, and whether both trees gave
the same verdict, rules and model score and excerpt. `--fresh`: every run a distinct window
of the payload (after as many others, to warm the memos and automata), as a proxy meets its
results; the trees are then compared on every window's result.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ab import interleaved, span, trees, use_root  # noqa: E402
from bench.scratch import scratch  # noqa: E402

SIZES = {"1KB": 1 << 10, "10KB": 10 << 10, "100KB": 100 << 10, "1MB": 1 << 20}
ROUNDS = {"1KB": 2000, "10KB": 500, "100KB": 60, "1MB": 12}


def corpus() -> str:
    """Ordinary text a tool returns: licence prose, a JSON API page, standard-library code and
    log lines (bench/payloads.py), in 2 KB pieces taken in turn so every size has each kind,
    and a line of non-ASCII prose.

    It used to be the repository's own docs; they came to quote attacks, encodings and
    respellings (PERFORMANCE.md, README.md), and the "ordinary" figures measured the decoders
    those trip.
    """
    from bench.payloads import payload

    piece = 2 << 10
    kinds = [payload(kind, 1 << 20) for kind in ("prose", "json", "code", "log")]
    parts = [text[at : at + piece] for at in range(0, 1 << 20, piece) for text in kinds]
    parts.insert(1, "Größenänderung für Übersicht; Привет, мир; 東京の天気は晴れ。")
    return "\n".join(parts)


def sized(text: str, size: int) -> str:
    return (text * (size // len(text) + 1))[:size]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def wall(command: list[str], rounds: int) -> float:
    """Median wall time of a short Python command, in ms."""
    times = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, check=True, env=env, cwd=ROOT)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


VIEW_SIZES = {"4KB": 4 << 10, "64KB": 64 << 10, "1MB": 1 << 20}
VIEW_ROUNDS = {"4KB": 41, "64KB": 15, "1MB": 7}


def views_ab(quick: bool) -> dict[str, Any]:
    """Detector-alone scan of each payload kind, new scorer against the old, interleaved."""
    from bench.payloads import KINDS, payload
    from proxy.detector import DetectorConfig, load_detector
    from proxy.detector.model import LinearModel, shipped_model
    from tests.reference_scorer import ReferenceModel

    # A budget no scan reaches, so both scorers score every view; "in budget" below is the
    # p50 wall time against the shipped budget.
    budget = load_detector(DetectorConfig()).time_budget_ms
    detector = load_detector(DetectorConfig(time_budget_ms=60_000))
    model = shipped_model().model
    reference = ReferenceModel(model)
    new_score = LinearModel.score

    def old_score(self: LinearModel, texts: list[str], classes: list[str], *,
                  deadline: float | None = None, base: int | None = None) -> Any:
        return reference.score(texts, classes, deadline=deadline)

    out: dict[str, Any] = {"budget_ms": budget, "load_before": os.getloadavg()[0]}
    for label, size in VIEW_SIZES.items():
        rounds = max(3, VIEW_ROUNDS[label] // (3 if quick else 1))
        for kind in KINDS:
            result = {"content": [{"type": "text", "text": payload(kind, size, 0)}]}
            times: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
            found: dict[str, Any] = {}
            for _ in range(rounds + 1):  # the first round warms up
                for name, scorer in (("new", new_score), ("old", old_score)):
                    setattr(LinearModel, "score", scorer)  # noqa: B010
                    wall0, cpu0 = time.perf_counter(), time.process_time()
                    inspection = detector.inspect_result("tools/call", result)
                    times[name].append(((time.perf_counter() - wall0) * 1000,
                                        (time.process_time() - cpu0) * 1000))
                    found[name] = inspection
            setattr(LinearModel, "score", new_score)  # noqa: B010
            row: dict[str, Any] = {}
            for name in ("new", "old"):
                kept = times[name][1:]
                p50 = statistics.median(w for w, _ in kept)
                row[name] = {
                    "p50_ms": round(p50, 1),
                    "cpu_p50_ms": round(statistics.median(c for _, c in kept), 1),
                    "whole_in_budget": p50 <= budget,
                    "verdict": found[name].verdict,
                }
            row["same_model_score"] = found["new"].model == found["old"].model
            out.setdefault(label, {})[kind] = row
    out["load_after"] = os.getloadavg()[0]
    return out


def print_views(report: dict[str, Any]) -> None:
    print(f"detector alone, inspect_result of one text result; budget {report['budget_ms']:g} ms"
          f"; load average {report['load_before']:.1f} -> {report['load_after']:.1f}")
    print("p50 wall ms (CPU ms), new scorer vs old; * = p50 over the budget")
    for label in VIEW_SIZES:
        print(f"\n{label}")
        for kind, row in report[label].items():
            cells = []
            for name in ("new", "old"):
                r = row[name]
                mark = "" if r["whole_in_budget"] else "*"
                cells.append(f"{name} {r['p50_ms']:7.1f}{mark:1} ({r['cpu_p50_ms']:6.1f})")
            same = "same score" if row["same_model_score"] else "SCORES DIFFER"
            print(f"  {kind:7} " + "   ".join(cells) + f"   {same}")


KIND_SIZES = (200, 4 << 10, 64 << 10, 1 << 20)


def _kind_rounds(size: int) -> int:
    return 301 if size <= 256 else 101 if size <= 4096 else 15 if size <= 65536 else 5


def kinds_report(sizes: list[int], quick: bool, fresh: bool = False) -> dict[str, Any]:
    """inspect_result of one text result per payload kind and size, the detector as shipped.
    `fresh`: every round a distinct window of the payload, after as many others as warm-up
    (the per-word memos and the rule sets' automata as a long session has them), as a proxy
    meets its results; each round's result is kept for the comparison of trees."""
    from bench.payloads import KINDS, payload
    from proxy.detector import DetectorConfig, load_detector

    budget = load_detector(DetectorConfig()).time_budget_ms
    detector = load_detector(DetectorConfig(time_budget_ms=60_000))  # the whole scan, always
    out: dict[str, Any] = {"budget_ms": budget}
    for size in sizes:
        rounds = max(3, _kind_rounds(size) // (3 if quick else 1))
        for kind in KINDS:
            if fresh:
                for seed in range(1000, 1000 + rounds):  # warm-up: other windows
                    detector.inspect_result("tools/call", _text_result(payload(kind, size, seed)))
            texts = [payload(kind, size, index if fresh else 0) for index in range(rounds + 1)]
            walls: list[float] = []
            cpus: list[float] = []
            founds: list[Any] = []
            for index, text in enumerate(texts):  # the first round warms up
                result = _text_result(text)
                wall0, cpu0 = time.perf_counter(), time.process_time()
                found = detector.inspect_result("tools/call", result)
                if index:
                    walls.append((time.perf_counter() - wall0) * 1000)
                    cpus.append((time.process_time() - cpu0) * 1000)
                if fresh or not index:
                    founds.append([found.verdict, found.rules, found.model, found.excerpts])
            out.setdefault(str(size), {})[kind] = {
                "p50_ms": statistics.median(walls),
                "cpu_p50_ms": statistics.median(cpus),
                "rounds": rounds,
                "found": founds if fresh else founds[0],
            }
    return out


def _text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _kinds_ab(args: argparse.Namespace) -> int:
    from bench.payloads import KINDS

    roots = trees(args.base)
    sizes = [str(size) for size in args.sizes]
    extra = ["--kinds", "--sizes", *sizes] + (["--quick"] if args.quick else []) + (
        ["--fresh"] if args.fresh else [])
    runs = interleaved(Path(__file__), roots, extra, args.rounds)
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    names = list(roots)
    budget = runs[names[0]][0]["budget_ms"]
    texts = "a distinct window each run, after as many" if args.fresh else "one text result"
    print(f"detector alone, inspect_result of {texts}, whole scans; * = p50 over the"
          f" {budget:g} ms budget; ranges over {args.rounds} rounds of p50s: " + " | ".join(names))
    for size in sizes:
        print(f"\n{size} B{'':10}{'p50 wall ms':>30}{'p50 CPU ms':>30}  same result")
        for kind in KINDS:
            rows = {name: [run[size][kind] for run in runs[name]] for name in names}
            wall = " | ".join(
                span([r["p50_ms"] for r in rows[name]])
                + ("*" if max(r["p50_ms"] for r in rows[name]) > budget else "")
                for name in names
            )
            cpu = " | ".join(span([r["cpu_p50_ms"] for r in rows[name]]) for name in names)
            every = [r["found"] for name in names for r in rows[name]]
            same = "yes" if all(f == every[0] for f in every) else "NO"
            print(f"  {kind:7}{'':6}{wall:>30}{cpu:>30}  {same}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a tenth of the rounds")
    parser.add_argument("--views", action="store_true",
                        help="payload kinds at 4 KB, 64 KB, 1 MB: new scorer against the old")
    parser.add_argument("--kinds", action="store_true",
                        help="payload kinds at 200 B to 1 MB, the detector as shipped")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(KIND_SIZES))
    parser.add_argument("--fresh", action="store_true",
                        help="with --kinds: a distinct window of the payload each run")
    parser.add_argument("--base", action="append", default=[], metavar="[NAME=]DIR",
                        help="with --kinds: the same against another tree, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="with --base: runs per tree")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # import proxy from this tree
    args = parser.parse_args()
    os.environ.setdefault("GATEWATCH_HOME", str(scratch("gw-bench-")))
    if args.kinds and args.base:
        return _kinds_ab(args)
    use_root(args.root)
    if args.kinds:
        report = kinds_report(args.sizes, args.quick, args.fresh)
        print(json.dumps(report, indent=2) if args.json else json.dumps(report))
        return 0
    if args.views:
        views = views_ab(args.quick)
        if args.json:
            print(json.dumps(views, indent=2))
        else:
            print_views(views)
        return 0

    from proxy.detector import DetectorConfig, load_detector
    from tests.hostile_inputs import hostile_inputs

    started = time.perf_counter()
    detector = load_detector(DetectorConfig())
    load_ms = (time.perf_counter() - started) * 1000
    report: dict[str, Any] = {"rules": len(detector.rules), "budget_ms": detector.time_budget_ms}

    from proxy.detector.model import model_path, read_model

    started = time.perf_counter()
    read_model(model_path())
    report["model"] = {
        "bytes": model_path().stat().st_size,
        "load_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    rules_only = load_detector(DetectorConfig(model=False))

    text = corpus()
    sizes: dict[str, Any] = {}
    for label, size in SIZES.items():
        result = {"content": [{"type": "text", "text": sized(text, size)}]}
        rounds = max(3, ROUNDS[label] // (10 if args.quick else 1))
        detector.inspect_result("tools/call", result)  # warm-up
        times = []
        verdicts = set()
        for _ in range(rounds):
            t0 = time.perf_counter()
            found = detector.inspect_result("tools/call", result)
            times.append((time.perf_counter() - t0) * 1000)
            verdicts.add(found.verdict)
        rules_times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            rules_only.inspect_result("tools/call", result)
            rules_times.append((time.perf_counter() - t0) * 1000)
        sizes[label] = {
            "rounds": rounds,
            "rules_only_p50_ms": round(percentile(rules_times, 0.50), 3),
            "p50_ms": round(percentile(times, 0.50), 3),
            "p95_ms": round(percentile(times, 0.95), 3),
            "p99_ms": round(percentile(times, 0.99), 3),
            "mb_per_s": round((size / (1 << 20)) / (statistics.mean(times) / 1000), 1),
            "verdicts": sorted(verdicts),
        }
    report["sizes"] = sizes

    baseline = sizes["1MB"]["p50_ms"]
    hostile: dict[str, Any] = {}
    for name, payload in hostile_inputs().items():
        result = {"content": [{"type": "text", "text": payload}]}
        unlimited = load_detector(DetectorConfig(time_budget_ms=60_000))
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            unlimited.inspect_result("tools/call", result)
            times.append((time.perf_counter() - t0) * 1000)
        budgeted = detector.inspect_result("tools/call", result)
        hostile[name] = {
            "median_ms": round(statistics.median(times), 1),
            "ratio_to_ordinary_1MB": round(statistics.median(times) / baseline, 2),
            "within_budget": not budgeted.timed_out,
        }
    report["hostile_1MB"] = hostile

    python = sys.executable
    rounds = 3 if args.quick else 10
    base = wall([python, "-c", "pass"], rounds)
    imported = wall([python, "-c", "import proxy.detector"], rounds)
    loaded = wall(
        [python, "-c", "from proxy.detector import load_detector; load_detector()"], rounds
    )
    report["startup"] = {
        "python_ms": round(base, 1),
        "import_proxy_detector_ms": round(imported - base, 1),
        "import_and_load_detector_ms": round(loaded - base, 1),
        "load_detector_in_process_ms": round(load_ms, 1),
    }

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['rules']} rules, time budget {report['budget_ms']:g} ms\n")
    m = report["model"]
    print(f"model file {m['bytes']} bytes, read and parsed in {m['load_ms']} ms\n")
    print(f"{'size':>6} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'MB/s':>8} "
          f"{'rules-only p50':>15}  rounds")
    for label, row in sizes.items():
        print(
            f"{label:>6} {row['p50_ms']:>9.3f} {row['p95_ms']:>9.3f} {row['p99_ms']:>9.3f} "
            f"{row['mb_per_s']:>8.1f} {row['rules_only_p50_ms']:>15.3f}  {row['rounds']}"
        )
    print("\nhostile 1 MB inputs (median of 3; ratio to the ordinary 1 MB p50):")
    for name, row in hostile.items():
        mark = "ok" if row["within_budget"] else "OVER BUDGET"
        print(
            f"  {name:<20} {row['median_ms']:>8.1f} ms  x{row['ratio_to_ordinary_1MB']:<6} {mark}"
        )
    s = report["startup"]
    print(
        f"\nstart-up (over bare python, {s['python_ms']} ms): import proxy.detector "
        f"+{s['import_proxy_detector_ms']} ms; import + load_detector() "
        f"+{s['import_and_load_detector_ms']} ms; load_detector() in process "
        f"{s['load_detector_in_process_ms']} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
