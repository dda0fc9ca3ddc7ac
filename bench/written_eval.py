"""The detector on written batches, per part and class: attacks flagged and blocked, benign
texts flagged and blocked, with the rules and the learned layer and with the rules alone.

    .venv/bin/python bench/written_eval.py BATCH.json ... [--model FILE] [--json] [--pin]

`--pin` prints instead, per batch, the indices of the attacks the detector passes and of the
benign texts it flags: the sets tests/test_detector_addressee.py pins (BATCHES), to paste when
the rules or the model change. A batch is {"attacks": [ITEM], "benign": [ITEM]}, each ITEM with
"class" and "text" (the written batches in tests/data and bench/written). `--model FILE`
scores a candidate model in place of the shipped one (bench/candidate_model.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench.scratch import scratch  # noqa: E402


def verdicts(batch: dict[str, Any], detector: Any) -> dict[str, list[str]]:
    """The detector's verdict on each text of `batch`, by part, each text a tool result."""
    return {
        part: [
            detector.inspect_result(
                "tools/call", {"content": [{"type": "text", "text": item["text"]}]}
            ).verdict
            for item in batch.get(part, [])
        ]
        for part in ("attacks", "benign")
    }


def evaluate(batches: list[dict[str, Any]], model: bool) -> dict[str, dict[str, int]]:
    """{"part/class": {"n", "flagged", "blocked"}} and a "part/all" row per part."""
    from proxy.detector import DetectorConfig, load_detector

    detector = load_detector(DetectorConfig(model=model))
    rows: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "flagged": 0, "blocked": 0})
    for batch in batches:
        for part, found in verdicts(batch, detector).items():
            for item, verdict in zip(batch.get(part, []), found, strict=True):
                for key in (f"{part}/{item['class']}", f"{part}/all"):
                    rows[key]["n"] += 1
                    rows[key]["flagged"] += verdict != "pass"
                    rows[key]["blocked"] += verdict == "block"
    return dict(sorted(rows.items()))


def pins(batches: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """Per batch: the attacks passed ("missed") and the benign texts flagged, by index."""
    from proxy.detector import load_detector

    detector = load_detector()
    found = {name: verdicts(batch, detector) for name, batch in batches.items()}
    return {
        name: {
            "missed": [i for i, v in enumerate(by_part["attacks"]) if v == "pass"],
            "flagged": [i for i, v in enumerate(by_part["benign"]) if v != "pass"],
        }
        for name, by_part in found.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("batches", type=Path, nargs="+")
    parser.add_argument("--model", type=Path, help="a candidate model file")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pin", action="store_true", help="the indices the tests pin")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.environ.setdefault("GATEWATCH_HOME", str(scratch("gw-written-")))
    version = "shipped"
    if args.model:
        from candidate_model import use_model

        version = use_model(args.model)
    batches = [json.loads(path.read_text(encoding="utf-8")) for path in args.batches]
    if args.pin:
        found = pins({p.name: b for p, b in zip(args.batches, batches, strict=True)})
        print(json.dumps(found, indent=1))
        return 0
    tables = {"rules and model": evaluate(batches, True), "rules only": evaluate(batches, False)}
    if args.json:
        print(json.dumps({"model": version, **tables}, indent=2))
        return 0
    print(f"model: {version}")
    for what, table in tables.items():
        print(what)
        for key, row in table.items():
            n = row["n"]
            print(f"  {key:<32} n={n:<4} flagged {row['flagged']:>4} ({row['flagged'] / n:6.1%})"
                  f"  blocked {row['blocked']:>4} ({row['blocked'] / n:6.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
