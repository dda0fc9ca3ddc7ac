"""The relay benchmark measures real tool calls: its upstream echoes, its payloads have the size,
and a short run proves from the audit log that Gatewatch decided and inspected every call."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.payloads import KINDS, payload
from bench.relay_bench import ROOT, call_line, call_texts, upstream_cmd


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [200, 4096, 65536])
def test_payloads_have_the_size_they_travel_at(kind: str, size: int) -> None:
    text = payload(kind, size, 3)
    assert size - 16 <= len(json.dumps(text)) <= size + 2
    assert text != payload(kind, size, 4)  # every call sends a different window


def test_the_upstream_echoes_the_argument_as_a_text_result() -> None:
    texts = ["plain", 'quotes " and \\ backslashes\n', "ünïcödé ✓", payload("json", 4096, 1)]
    lines = [call_line(i, t) for i, t in enumerate(texts)]
    # A re-serialising proxy sends other bytes for the same call: the upstream parses those.
    spaced = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": "spaced"}}})
    done = subprocess.run(
        upstream_cmd(), input=b"".join(lines) + spaced.encode() + b"\n",
        capture_output=True, timeout=30, check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [*range(len(texts)), 99]
    for answer, text in zip(answers, [*texts, "spaced"], strict=True):
        assert answer["result"] == {"content": [{"type": "text", "text": text}], "isError": False}


@pytest.mark.e2e
def test_a_short_run_proves_gatewatch_inspected_every_call() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "relay_bench.py"), "--sizes", "200,4096",
         "--scale", "0.02", "--rounds", "1", "--repeat", "1", "--no-bulwark", "--no-scan",
         "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    probe = report["probe"]
    assert probe["injection_blocked"] and probe["clean_allowed"]
    assert probe["taint_rows"] >= 1  # the URL (and, with the destination model, its host)
    for block in report["sizes"].values():
        check = block["audit"]["gatewatch"]
        assert check["calls"] == {"allow/rules/default": check["results"]}
        assert all(r["refused"] == 0 for r in block["results"].values())


def test_no_call_of_a_run_repeats_a_text() -> None:
    """A cache of recent texts (taint's, the detector's) must never answer a timed call."""
    for size, calls in ((4096, 2030), (65536, 430)):
        texts = call_texts(size, calls)
        assert len(set(texts)) == len(texts)
