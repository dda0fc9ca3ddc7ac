"""The app's style sheet for the current palette: the base file, plus dark overrides when the
window colour is dark (a dark desktop theme), so no text is dark-on-dark."""

from __future__ import annotations

from PySide6.QtGui import QPalette

from proxy import paths


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def style_sheet(palette: QPalette) -> str:
    folder = paths.resources_dir() / "style"
    names = ["gatewatch.qss", *(["gatewatch-dark.qss"] if is_dark(palette) else [])]
    return "\n".join((folder / n).read_text(encoding="utf-8") for n in names
                     if (folder / n).exists())
