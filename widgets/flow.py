"""FlowLayout: a row of controls that wraps onto the next line when the panel is narrower than
the row (Qt's "Flow Layout" example, PySide6 port), so a laptop's 1366 px window shows every
control of the Replay and What-if panels without a horizontal scroll bar."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    """Items left to right, wrapped at the layout's width; hidden widgets take no room."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing

    # QBoxLayout's API as far as the panels use it
    def addStretch(self, _stretch: int = 0) -> None:
        """A flow has no stretch: the rest of each line stays empty."""

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._lay_out(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._lay_out(rect, apply=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _lay_out(self, rect: QRect, apply: bool) -> int:
        """Place the items line by line (each centred in its line's height); returns the
        height used."""
        m = self.contentsMargins()
        r = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        lines: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        x = r.x()
        for item in self._items:
            if item.isEmpty():  # a hidden widget
                continue
            hint = item.sizeHint()
            if lines[-1] and x + hint.width() > r.right() + 1:
                lines.append([])
                x = r.x()
            lines[-1].append((item, hint))
            x += hint.width() + self._spacing
        y = r.y()
        for line in (ln for ln in lines if ln):
            height = max(h.height() for _, h in line)
            x = r.x()
            for item, hint in line:
                if apply:
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2), hint))
                x += hint.width() + self._spacing
            y += height + self._spacing
        return max(0, y - self._spacing - rect.y()) + m.bottom()
