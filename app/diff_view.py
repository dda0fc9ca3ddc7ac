"""A read-only, monospace view of a unified diff with added and removed lines coloured."""

from __future__ import annotations

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QWidget


class _DiffHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        for prefix, fg, bg in (("+", "#1d6b4e", "#e6f4ea"), ("-", "#b3261e", "#fce8e6"),
                               ("@", "#5f6368", None)):
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(fg))
            if bg:
                fmt.setBackground(QColor(bg))
            self._formats[prefix] = fmt

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            return
        fmt = self._formats.get(text[:1])
        if fmt is not None:
            self.setFormat(0, len(text), fmt)


class DiffView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("diff")
        self.setReadOnly(True)
        self._highlighter = _DiffHighlighter(self.document())
