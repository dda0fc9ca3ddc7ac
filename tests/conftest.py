"""Fixtures shared by every test. Plain helpers live in tests/support.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Approver

pytest_plugins = ["tests.clients_home"]  # the `home` fixture of the client-config tests

# Qt tests run without a display, however pytest was started (tests/run.sh sets it too). Read
# when the QApplication is made, which is after this module loads.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def gw_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own GATEWATCH_HOME; nothing touches the real user's state."""
    home = tmp_path / "gwhome"
    home.mkdir()
    monkeypatch.setenv("GATEWATCH_HOME", str(home))
    return home


@pytest.fixture
def db_file(gw_home: Path) -> Path:
    return gw_home / "data" / "gatewatch.db"


@pytest.fixture
def approvers() -> Iterator[list[Approver]]:
    """`gatewatch approve` processes a test started (tests.support.serve); stopped after it."""
    started: list[Approver] = []
    yield started
    for approver in started:
        approver.stop()


@pytest.fixture(params=["c", "python"])
def scorer_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each scorer test on both paths: the C scorer (where built) and the Python one."""
    from proxy.detector import native
    from proxy.detector.model import shipped_model

    if request.param == "c":
        if native.load() is None:
            pytest.skip("the C extension is not built here")
        return
    monkeypatch.setattr(native, "load", lambda: None)  # also for the models a test makes
    scorer = shipped_model().model._scorer
    monkeypatch.setattr(scorer, "native", None)
    monkeypatch.setattr(scorer, "_windows_c", None)


@pytest.fixture(scope="module")
def detector() -> Any:
    """The detector with the shipped packs and model, loaded once per test module."""
    from tests.detector_cases import unhurried

    return unhurried()
