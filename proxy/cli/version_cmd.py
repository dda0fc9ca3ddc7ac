"""`gatewatch version`: what a bug report needs."""

from __future__ import annotations

import argparse
import platform
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    import json

    from proxy import __version__, paths
    from proxy.store.schema import SCHEMA_VERSION

    db = paths.db_path()
    db_version: int | str = "not created yet"
    if db.exists():
        from proxy.store.database import Database

        store = Database.open(db, readonly=True)
        try:
            db_version = store.schema_version()
        finally:
            store.close()
    info = {
        "gatewatch": __version__,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "database": str(db),
        "database_schema": db_version,
        "supported_schema": SCHEMA_VERSION,
        "config_dir": str(paths.config_dir()),
        "packs": str(paths.packs_dir()),
    }
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        width = max(map(len, info))
        for key, value in info.items():
            print(f"{key:<{width}}  {value}")
    return 0
