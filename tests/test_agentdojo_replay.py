"""The AgentDojo replay (bench/agentdojo_replay.py) plays every pair on an engine of its own: a
store shared with another suite's engine would carry that engine's flagged results, trust and
taint over, and make one suite's figures depend on which suites ran before it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_CODE = """
import sys
from pathlib import Path
from detector_corpora import use_corpora
use_corpora()
from agentdojo.task_suite.load_suites import get_suites
import agentdojo_replay as replay
suites = get_suites("v1.2.2")
tmp = Path(sys.argv[1])
first = replay.Replayer(suites["workspace"], tmp, "approve", None)
second = replay.Replayer(suites["travel"], tmp, "approve", None)
first.engine()
second.engine()
print(len(list(tmp.glob("*.db"))))
"""


def test_each_suite_s_engines_have_their_own_store(tmp_path):
    sys.path[:0] = [str(ROOT / "bench")]
    import detector_corpora

    if not detector_corpora.corpora_installed():
        if os.environ.get("CI") == "true":
            pytest.fail("the corpora (agentdojo) are not installed in CI: tests/run.sh must")
        pytest.skip("the corpora are not installed here: bash bench/install_corpora.sh")
    done = subprocess.run(
        [sys.executable, "-c", _CODE, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT / "bench",
        timeout=300,
        env={**os.environ, "GATEWATCH_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The first engine of the second suite is not the first suite's first engine's file.
    assert done.stdout.split() == ["2"]
