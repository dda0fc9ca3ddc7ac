"""bench/written_eval.py scores written batches per class, and with --model a candidate model
file in place of the shipped one (bench/candidate_model.py), the rest of the detector as is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "written_eval.py"), *args, "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=True,
    )
    return json.loads(done.stdout)


def test_a_candidate_model_decides_where_the_shipped_one_would_not(tmp_path):
    # A model that knows one word: whatever says "zebrafy" is an injection to it.
    model = {"format": 1, "version": "zebra-1", "window": 32, "bias": -5.0,
             "block_threshold": 0.5, "warn_threshold": 0.5, "weights": {"u:zebrafy": 25.0}}
    (tmp_path / "model.json").write_text(json.dumps(model))
    batch = {"attacks": [{"class": "odd", "text": "Please zebrafy the zebrafy report today."}],
             "benign": [{"class": "note", "text": "Lunch is at noon in the small room."}]}
    (tmp_path / "batch.json").write_text(json.dumps(batch))
    shipped = _run(str(tmp_path / "batch.json"))
    candidate = _run(str(tmp_path / "batch.json"), "--model", str(tmp_path / "model.json"))
    assert shipped["rules and model"]["attacks/odd"] == {"n": 1, "flagged": 0, "blocked": 0}
    assert candidate["model"] == "zebra-1"
    assert candidate["rules and model"]["attacks/odd"] == {"n": 1, "flagged": 1, "blocked": 1}
    assert candidate["rules and model"]["benign/all"]["flagged"] == 0
    # the rules alone do not read the model at all
    assert candidate["rules only"]["attacks/odd"]["flagged"] == 0


def test_pin_gives_the_sets_the_written_batch_tests_pin():
    from tests.test_detector_addressee import BATCHES

    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "written_eval.py"),
         str(ROOT / "tests" / "data" / "session22_batch_a.json"), "--pin"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=True,
    )
    found = json.loads(done.stdout)["session22_batch_a.json"]
    _data, missed, flagged = BATCHES["a"]
    assert (set(found["missed"]), set(found["flagged"])) == (missed, flagged)
