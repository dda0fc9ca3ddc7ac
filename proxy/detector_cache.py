"""The built detector, cached between runs so a proxy does not re-read and re-check its packs.

Loading the rule packs (YAML, then each pattern's ReDoS check) is most of a detector's build
time. The built detector is pickled into the user's cache directory under a key made of
everything it was built from: the Gatewatch and Python versions, the detector settings, the
stat (path, mtime, size) of every pack and policy file and of the detector's own code, and the
list of pack files, so a pack that is edited, added or removed is read again. A cache that does
not match, cannot be read, or could have been written by anyone else is ignored and rebuilt.
The RE2 sets are rebuilt from the rules on load; they cannot be pickled.
"""

from __future__ import annotations

import copyreg
import hashlib
import io
import os
import pickle
import stat
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

CACHE_NAME = "detector.pickle"


def cache_path() -> Path:
    from proxy.paths import cache_dir

    return cache_dir() / CACHE_NAME


def cached_detector(config: Any, build: Callable[[Any], Any]) -> Any:
    """`build(config)`, or the same detector from the cache when nothing it depends on changed.
    A detector with the local classifier (which holds a database connection) is never cached."""
    if config.classifier.enabled:
        return build(config)
    try:
        key = cache_key(config)
    except OSError:
        return build(config)
    path = cache_path()
    detector = _read(path, key)
    if detector is not None:
        return detector
    detector = build(config)
    _write(path, key, detector)
    return detector


def cache_key(config: Any) -> bytes:
    import proxy
    import proxy.detector
    from proxy.detector.policy import builtin_policy_path
    from proxy.detector.rules import builtin_pack_paths, expand_paths

    packs = expand_paths(list(config.rule_paths) or builtin_pack_paths())
    packs += expand_paths(list(config.extra_rule_paths))
    policy = config.policy_path or builtin_policy_path()
    code = sorted(Path(proxy.detector.__file__).parent.glob("*.py"))
    code.append(Path(proxy.__file__).with_name("yaml_lines.py"))  # the packs' YAML loader
    # db_path only matters to the classifier; a set's repr follows the hash seed.
    settings = replace(config, db_path=None, disabled_rules=frozenset())
    parts = [proxy.__version__, sys.version, repr(settings), repr(sorted(config.disabled_rules))]
    parts += [_stat(p) for p in [*packs, policy, *code, Path(__file__)]]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest().encode()


def _stat(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_mtime_ns}|{st.st_size}"


def _read(path: Path, key: bytes) -> Any:
    from proxy.detector.detector import Detector

    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not _ours(st) or not _ours(os.stat(path.parent)):
                return None
            if f.readline().rstrip(b"\n") != key:
                return None
            detector = pickle.load(f)
    except FileNotFoundError:
        return None
    except Exception:  # truncated, corrupt or from other code: build it again
        return None
    return detector if isinstance(detector, Detector) else None


def _ours(st: os.stat_result) -> bool:
    """Written by this user and by nobody else: a pickle is code, so no one else's."""
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or st.st_uid == getuid()
    return owner_ok and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _write(path: Path, key: bytes, detector: Any) -> None:
    from proxy.detector.scanner import CompiledRules

    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    table = copyreg.dispatch_table.copy()
    table[CompiledRules] = lambda compiled: (CompiledRules, (compiled.rules,))
    pickler.dispatch_table = table
    try:
        pickler.dump(detector)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key + b"\n")
            f.write(buf.getvalue())
        os.replace(tmp, path)
    except Exception:  # a cache that cannot be written only costs the next start its time
        return
