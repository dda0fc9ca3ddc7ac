"""`gatewatch detect TEXT` (`-` for stdin, `--file PATH` for a file): scan text the way the
proxy scans tool results.

Exit status: 0 pass, 1 warn or block, 2 bad input (no text, a file that cannot be read) or a
malformed pack, policy or settings file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "text", nargs="?", help="text to scan, or - to read it from standard input"
    )
    parser.add_argument(
        "--file", "-f", type=Path, metavar="PATH", help="scan the contents of this file instead"
    )
    parser.add_argument(
        "--mode",
        choices=("default", "paranoid"),
        help="detector policy mode (default: the one in detector.yaml)",
    )
    parser.add_argument(
        "--arguments",
        action="store_true",
        help="scan as tool-call arguments (shell and path rules)",
    )
    parser.add_argument("--json", action="store_true", help="print the inspection as JSON")


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from proxy.cli.text_input import from_argument, from_file, from_stdin
    from proxy.detector import DetectorConfig, PackError, load_detector

    if (args.text is None) == (args.file is None):
        print("gatewatch detect: give the TEXT to scan, - for standard input, or --file PATH "
              "(one of them)", file=sys.stderr)
        return 2
    if args.file is not None:
        try:
            text = from_file(args.file)
        except OSError as exc:
            print(f"gatewatch detect: cannot read {args.file}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    elif args.text == "-":
        text = from_stdin()
    else:
        text = from_argument(args.text)
        if os.path.isfile(args.text):
            # A file name scanned as text passes, which reads as "this file is clean".
            print(f"gatewatch detect: note: scanning the words {args.text!r} themselves; to "
                  f"scan that file, use --file {args.text}", file=sys.stderr)
    try:
        config = DetectorConfig.load()
        if args.mode:
            config = replace(config, mode=args.mode)
        detector = load_detector(config)
    except PackError as exc:
        print(f"gatewatch detect: {exc}", file=sys.stderr)
        return 2
    if args.arguments:
        inspection = detector.inspect_arguments("-", {"text": text})
    else:
        inspection = detector.scan_text(text)
    if args.json:
        print(
            json.dumps(
                {**inspection.detail(), "reason": inspection.reason}, indent=2, ensure_ascii=False
            )
        )
    else:
        print(f"{inspection.verdict.upper()} (score={inspection.score:.2f})")
        if inspection.rules:
            print("  rules hit:")
            for rule_id in inspection.rules:
                print(f"    {rule_id}: {inspection.excerpts.get(rule_id, '')!r}")
        else:
            print("  rules hit: none")
        if inspection.model is not None:
            model = inspection.model
            print(f"  model: {model['score']:.3f} ({model['label']}) on {model['excerpt']!r}")
        else:
            print("  model: off")
        print(f"  decided by: {inspection.layer} (policy rule {inspection.policy})"
              f" -> {inspection.verdict}")
        if inspection.notes:
            print(f"  notes: {', '.join(inspection.notes)}")
        print(f"  time: {inspection.elapsed_ms:.2f} ms")
    return 0 if inspection.verdict == "pass" else 1
