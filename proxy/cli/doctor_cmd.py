"""`gatewatch doctor`: check the environment; exit 0 all OK, 1 warnings, 2 failures."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")


def run(args: argparse.Namespace) -> int:
    from proxy.doctor.report import render_json, render_text, worst
    from proxy.doctor.runner import run_all

    results = run_all()
    print(render_json(results) if args.json else render_text(results))
    return int(worst(results))
