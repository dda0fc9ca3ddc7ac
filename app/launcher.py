"""The `gatewatch` command: the tray app with no arguments (or `--show`), the proxy's CLI for
everything else. It lives in `app` so that importing `proxy` never imports `app`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv == ["--show"]:
        from app.main import main as app_main

        return app_main(argv)
    from proxy.cli import main as cli_main

    return cli_main(argv)
