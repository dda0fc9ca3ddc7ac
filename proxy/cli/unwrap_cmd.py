"""`gatewatch unwrap`: give servers back their original command lines (and secrets)."""

from __future__ import annotations

import argparse

from proxy.cli.wrap_cmd import add_selection_args, run_action


def configure(parser: argparse.ArgumentParser) -> None:
    add_selection_args(parser)


def run(args: argparse.Namespace) -> int:
    return run_action("unwrap", args)
