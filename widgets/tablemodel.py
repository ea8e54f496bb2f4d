"""A small read-only table model over formatted rows, sortable by raw values (UserRole)."""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from explorer.core.escape import qt_plain_tip

SORT_ROLE = Qt.ItemDataRole.UserRole
KEY_ROLE = Qt.ItemDataRole.UserRole + 1


class RowsModel(QAbstractTableModel):
    """rows: list of display-string lists; sort: same shape, values to sort by (None = text);
    keys: one object per row (KEY_ROLE, e.g. a cluster name); colours / bold / tips per row."""

    def __init__(self, headers: Sequence[str], parent=None, header_tips: Sequence[str] | None = None):
        super().__init__(parent)
        self.headers = list(headers)
        self.header_tips = list(header_tips or [])
        self.rows: list[list[str]] = []
        self.sort: list[list[Any]] = []
        self.keys: list[Any] = []
        self.colours: list[QColor | None] = []
        self.bold: list[bool] = []
        self.tips: list[str | None] = []

    def set_rows(self, rows, sort=None, keys=None, colours=None, bold=None, tips=None) -> None:
        self.beginResetModel()
        n = len(rows)
        self.rows = [list(r) for r in rows]
        self.sort = [list(r) for r in sort] if sort is not None else [list(r) for r in rows]
        self.keys = list(keys) if keys is not None else list(range(n))
        self.colours = list(colours) if colours is not None else [None] * n
        self.bold = list(bold) if bold is not None else [False] * n
        self.tips = list(tips) if tips is not None else [None] * n
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def set_headers(self, headers: Sequence[str]) -> None:
        """New column titles (same number of columns)."""
        if list(headers) != self.headers:
            self.headers = list(headers)
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(headers) - 1)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self.header_tips):
            return qt_plain_tip(self.header_tips[section])
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.rows[r][c]
        if role == SORT_ROLE:
            v = self.sort[r][c]
            return v if v is not None else ""
        if role == KEY_ROLE:
            return self.keys[r]
        if role == Qt.ItemDataRole.ForegroundRole and self.colours[r] is not None:
            return QBrush(self.colours[r])
        if role == Qt.ItemDataRole.FontRole and self.bold[r]:
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:  # plain text: a name may start with a tag
            return qt_plain_tip(self.tips[r] or (self.rows[r][c] if len(self.rows[r][c]) > 40 else None))
        return None


def sortable(model: RowsModel, parent=None) -> QSortFilterProxyModel:
    """A proxy sorting by SORT_ROLE (numbers numerically, missing values as '')."""
    proxy = _Proxy(parent)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    return proxy


class _Proxy(QSortFilterProxyModel):
    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)
