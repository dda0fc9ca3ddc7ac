"""What a detector scan costs when the CPU caches are cold, as they are in a real proxy.

    .venv/bin/python bench/scan_cache.py [--size 200] [--kind prose] [--flush 0,2,16,64]

In `gatewatch run` the client, the upstream and the audit writer run between two scans of one
proxy, and evict what the scan had in the caches (the rule automata's states, the model's
tables, the interpreter's objects). This times the steps of one result scan (normalisation and
views, the rules, the learned layer) per text, each on a fresh text after a warm-up of 1,500,
once back to back (warm) and once after walking a buffer of FLUSH MB before each text (the
host's L2 is 1 MB a core and its L3 32 MB). Mean microseconds per text.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.payloads import KINDS, payload  # noqa: E402
from bench.scratch import scratch  # noqa: E402

WARMUP = 1500
TIMED = 800


def steps(kind: str, size: int) -> tuple[list[str], list[tuple[str, Callable[[str], object]]]]:
    from proxy.detector import DetectorConfig, load_detector
    from proxy.detector.detector import model_views
    from proxy.detector.model import shipped_model
    from proxy.detector.normalize import Prepared, base, finish
    from proxy.detector.scanner import scan

    detector = load_detector(DetectorConfig())
    texts = [payload(kind, size, 5 + i) for i in range(WARMUP + TIMED)]
    for text in texts[:WARMUP]:
        detector.scan_text(text)
    rules = detector._compiled["s2c"]
    model = shipped_model().model
    prepared: dict[str, Prepared] = {}

    def views(text: str) -> None:
        prepared[text] = finish(base(text, deadline=None), markup=True)

    def learned(text: str) -> None:
        texts, text_view = model_views(prepared[text])
        model.score(texts, [], base=text_view)

    return texts[WARMUP:], [
        ("normalisation and views", views),
        ("rules", lambda text: scan(prepared[text], rules, None)),
        ("learned layer", learned),
        ("whole scan_text", detector.scan_text),
    ]


def timed(fn: Callable[[str], object], texts: list[str], flush: bytearray | None) -> float:
    total = 0.0
    for text in texts:
        if flush is not None:
            flush.find(b"\x01")  # reads every byte: evicts what the scan left in the caches
        started = time.perf_counter()
        fn(text)
        total += time.perf_counter() - started
    return total / len(texts) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--kind", default="prose", choices=KINDS)
    parser.add_argument("--flush", default="0,2,16,64", help="MB walked before each text")
    args = parser.parse_args()
    os.environ.setdefault("GATEWATCH_HOME", str(scratch("gw-scan-cache-")))
    texts, named = steps(args.kind, args.size)
    sizes = [int(mb) for mb in args.flush.split(",")]
    print(f"µs per {args.size} B {args.kind} text, mean of {len(texts)}; flush = MB walked "
          "before each text (0: back to back)")
    print(f"{'step':<26}" + "".join(f"{f'flush {mb}':>11}" for mb in sizes))
    for name, fn in named:
        row = []
        for mb in sizes:
            flush = bytearray(mb * 1024 * 1024) if mb else None
            row.append(timed(fn, texts, flush))
        print(f"{name:<26}" + "".join(f"{us:11.1f}" for us in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
