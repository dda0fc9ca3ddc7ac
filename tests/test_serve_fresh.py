"""proxy.serve.fresh: a cached value is rebuilt exactly when a source file changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proxy.serve.fresh import Fresh, yaml_files


def test_rebuilds_only_when_a_source_changes(tmp_path: Path) -> None:
    pack = tmp_path / "packs" / "a.yaml"
    pack.parent.mkdir()
    pack.write_text("one")
    builds: list[str] = []

    def build() -> str:
        builds.append(pack.read_text())
        return builds[-1]

    fresh = Fresh(build, lambda: yaml_files(tmp_path / "packs", tmp_path / "user.yaml"))
    assert fresh.get() == "one" and fresh.get() == "one"
    assert builds == ["one"]
    pack.write_text("two!")  # new size
    assert fresh.get() == "two!"
    stat = pack.stat()
    pack.write_text("six!")  # same size: the mtime tells
    os.utime(pack, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert fresh.get() == "six!"
    (tmp_path / "user.yaml").write_text("x")  # a file that appears counts too
    fresh.get()
    (tmp_path / "packs" / "b.yaml").write_text("")  # and a new file in a directory
    fresh.get()
    assert builds == ["one", "two!", "six!", "six!", "six!"]


def test_a_failed_build_is_not_cached(tmp_path: Path) -> None:
    calls = 0

    def build() -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ValueError("broken pack")
        return calls

    fresh = Fresh(build, lambda: [tmp_path])
    with pytest.raises(ValueError):
        fresh.get()
    assert fresh.get() == 2 and fresh.get() == 2
