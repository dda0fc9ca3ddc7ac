"""Used by uninstall.sh with the installed Gatewatch's Python: list or undo wrapped client configs.

--list prints one wrapped server per line (nothing when none); --apply restores every original
command line. Exit 0 on success, 1 when a file could not be written, 3 when this build of
Gatewatch cannot read client configs.
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser(prog="unwrap_clients.py")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--list", action="store_true", help="print the wrapped servers")
    group.add_argument("--apply", action="store_true", help="unwrap every one of them")
    args = parser.parse_args()
    try:
        from proxy.clients import changes, discovery
    except ImportError:
        print("this Gatewatch cannot read client configs", file=sys.stderr)
        return 3
    if args.list:
        for config in discovery.discover():
            for entry in discovery.load(config).entries:
                if entry.wrapped:
                    print(f"{config.client.label}: {entry.name} ({config.path})")
        return 0
    applied = changes.unwrap_everything()
    for path, backup in applied.written:
        print(f"unwrapped {path} (backup: {backup})")
    for path, reason in applied.failed:
        print(f"could not unwrap {path}: {reason}", file=sys.stderr)
    for note in applied.restart:
        print(f"then {note}")
    return 1 if applied.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
