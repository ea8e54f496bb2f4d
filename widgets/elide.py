"""A label that never widens its window: it shows as much of its text as fits, elided with
"…", and the whole text on hover (issue 33: a 200-character cluster name or a selection's
condition made the window 2,058 px wide on a 1,366 px screen)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy

from explorer.core.escape import qt_plain_tip


class ElidedLabel(QLabel):
    """ElidedLabel(text, least=80, mode=Qt.ElideMiddle): plain text, one line; its minimum
    width is `least` px (so a layout may shrink it), its size hint the whole text; painted
    elided to its width, the whole text (and `tip`) as its tooltip when cut."""

    def __init__(self, text: str = "", parent=None, least: int = 80,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle, tip: str = ""):
        super().__init__(parent)
        self._full, self._least, self._mode, self._tip = "", least, mode, tip
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text or ""
        super().setText(self._full)
        self.updateGeometry()
        self._set_tip()

    def full_text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """The text as painted at the current width."""
        return self.fontMetrics().elidedText(self._full, self._mode, max(self.contentsRect().width(), 1))

    def is_elided(self) -> bool:
        return self.shown_text() != self._full

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        h = super().minimumSizeHint().height()
        return QSize(min(self._least, self.fontMetrics().horizontalAdvance(self._full) + 2), h)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 2, super().sizeHint().height())

    def resizeEvent(self, ev) -> None:  # noqa: N802
        super().resizeEvent(ev)
        self._set_tip()

    def _set_tip(self) -> None:
        whole = self._full if self.is_elided() else ""
        self.setToolTip(qt_plain_tip("\n\n".join(t for t in (whole, self._tip) if t)) or "")

    def paintEvent(self, _ev) -> None:  # noqa: N802
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.setFont(self.font())
        p.drawText(self.contentsRect(), int(self.alignment()) | int(Qt.TextFlag.TextSingleLine),
                   self.shown_text())
        p.end()
