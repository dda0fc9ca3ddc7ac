"""The README's screenshots come from docs/screenshots/make_screenshots.py: it must keep
running against the current tree (it broke once when the store moved) and still draw every
screen the screenshots README lists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "docs" / "screenshots"


def listed() -> set[str]:
    names = set(re.findall(r"^\| `([\w-]+\.png)` \|", (SHOTS / "README.md").read_text(), re.M))
    return names - {"live-ask.png"}  # a real run of an earlier version, not made by the script


def test_the_screenshot_script_draws_every_listed_screen(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GW_SHOTS_OUT": str(tmp_path)}
    done = subprocess.run([sys.executable, str(SHOTS / "make_screenshots.py")], env=env,
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    made = {p.name for p in tmp_path.glob("*.png")}
    assert listed() and listed() <= made, (listed() - made)
    for name in sorted(listed()):
        image = QImage(str(tmp_path / name))
        assert image.width() > 100 and image.height() > 50, name
        # Not one flat colour: something was drawn.
        colours = {image.pixel(x, y) for x in range(0, image.width(), 7)
                   for y in range(0, image.height(), 7)}
        assert len(colours) > 3, name
