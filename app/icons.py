"""Tray and app icons from resources/icons, with the pending count painted on at run time."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from app.tray_state import TrayState
from proxy import paths

SIZE = 64


def icon_path(name: str) -> str:
    return str(paths.resources_dir() / "icons" / f"{name}.svg")


def app_icon() -> QIcon:
    return QIcon(icon_path("gatewatch"))


def tray_icon(state: TrayState, pending: int = 0) -> QIcon:
    pixmap = QPixmap(SIZE, SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(icon_path(f"tray-{state.value}")).render(painter, QRectF(0, 0, SIZE, SIZE))
    if state is TrayState.PENDING and pending > 0:
        _badge(painter, "9+" if pending > 9 else str(pending))
    painter.end()
    return QIcon(pixmap)


def _badge(painter: QPainter, text: str) -> None:
    # Bottom-right disc, large enough to read at 22 px tray size.
    rect = QRectF(SIZE * 0.42, SIZE * 0.42, SIZE * 0.58, SIZE * 0.58)
    painter.setPen(QColor("#ffffff"))
    painter.setBrush(QColor("#c0392b"))
    painter.drawEllipse(rect)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(int(SIZE * (0.36 if len(text) == 1 else 0.28)))
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
