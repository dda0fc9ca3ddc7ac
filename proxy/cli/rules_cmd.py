"""`gatewatch rules lint [--strict] [FILES...]` and `gatewatch rules list`."""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    lint = sub.add_parser("lint", help="validate rule packs, run their examples, check for ReDoS")
    lint.add_argument(
        "--strict",
        action="store_true",
        help="also require a known class, a description and two positive examples",
    )
    lint.add_argument(
        "files",
        nargs="*",
        type=Path,
        help="pack files or directories (default: the built-in packs)",
    )
    listing = sub.add_parser("list", help="list the rules the detector loads")
    listing.add_argument("files", nargs="*", type=Path, help="pack files or directories")


def run(args: argparse.Namespace) -> int:
    from proxy.detector.rules import builtin_pack_paths

    paths: list[Path] = list(args.files) or builtin_pack_paths()
    if args.action == "list":
        from proxy.detector.errors import PackError
        from proxy.detector.rules import load_packs

        try:
            rules = load_packs(paths)
        except PackError as exc:
            print(f"gatewatch rules: {exc}")
            return 1
        for rule in rules:
            print(f"{rule.id:<48} {rule.cls:<18} {rule.severity:<8} {rule.score:.2f}")
        return 0

    from proxy.detector.lint import lint_paths

    missing = [path for path in paths if not path.exists()]
    if missing:
        print(f"gatewatch rules lint: no such file: {missing[0]}")
        return 2
    issues, count = lint_paths(paths, strict=args.strict)
    for issue in issues:
        print(issue)
    errors = sum(1 for issue in issues if issue.level == "error")
    warnings = len(issues) - errors
    print(f"{count} rules checked: {errors} errors, {warnings} warnings")
    return 1 if errors or (args.strict and warnings) else 0
