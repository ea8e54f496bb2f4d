"""A small read-only table model over formatted rows, sortable by raw values (UserRole).

The model sorts itself (one Python sort with a key): a QSortFilterProxyModel asks the Python
model for two values per comparison, which took minutes for 100,000 clusters."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from explorer.core.escape import qt_plain_tip

SORT_ROLE = Qt.ItemDataRole.UserRole
KEY_ROLE = Qt.ItemDataRole.UserRole + 1


class RowsModel(QAbstractTableModel):
    """rows: list of display-string lists; sort: same shape, values to sort by (None = text);
    keys: one object per row (KEY_ROLE, e.g. a cluster name); colours / bold / tips per row.

    Lazy rows for long lists: with `formatter`, rows holds raw items and each is formatted
    (formatter(item) -> display strings, tooltip) the first time it is shown, so 100,000
    clusters cost the window only the rows on screen."""

    def __init__(self, headers: Sequence[str], parent=None, header_tips: Sequence[str] | None = None):
        super().__init__(parent)
        self.headers = list(headers)
        self.header_tips = list(header_tips or [])
        # per item, in the order given; _perm[view row] = item (sorting permutes _perm only)
        self._items: list[Any] = []
        self._sort: list[list[Any]] | Callable[[int], list[Any]] = []
        self._sort_cols: dict[int, list[Any]] = {}
        self._keys: list[Any] = []
        self._colours: list[QColor | None] = []
        self._bold: list[bool] = []
        self._tips: list[str | None] = []
        self._shown: dict[int, tuple[list[str], str | None]] = {}  # lazy items once formatted
        self._perm: list[int] = []
        self._formatter: Callable[[Any], tuple[list[str], str | None]] | None = None
        self._order: tuple[int, Qt.SortOrder] | None = None  # the view's last sort, kept by set_rows
        self.tip_columns: set[int] = set()  # columns whose cell is its own tip (may be elided)

    def set_rows(self, rows, sort=None, keys=None, colours=None, bold=None, tips=None,
                 formatter=None, order: tuple[int, Qt.SortOrder] | None = None) -> None:
        """New rows. formatter: rows are raw items, formatted on demand (see the class; sort
        is then required); sort may be a function column -> that column's sort values of
        every item (computed when the column is sorted); order: (column, order) to sort by
        now (else the view's last sort is kept)."""
        self.beginResetModel()
        n = len(rows)
        self._formatter = formatter
        self._items = list(rows) if formatter else [list(r) for r in rows]
        self._shown = {}
        self._sort_cols = {}
        self._sort = sort if callable(sort) else [list(r) for r in (rows if sort is None else sort)]
        self._keys = list(keys) if keys is not None else list(range(n))
        self._colours = list(colours) if colours is not None else [None] * n
        self._bold = list(bold) if bold is not None else [False] * n
        self._tips = list(tips) if tips is not None else [None] * n
        self._order = order or self._order
        self._perm = self._sorted(*self._order) if self._order else list(range(n))
        self.endResetModel()

    @property
    def rows(self) -> list[list[str]]:
        """The display strings of every row, in view order (formats every lazy row)."""
        return [self.display(r) for r in range(len(self._perm))]

    @property
    def keys(self) -> list[Any]:
        """The key of every row, in view order."""
        return [self._keys[i] for i in self._perm]

    def display(self, r: int) -> list[str]:
        """The display strings of view row r (formatting a lazy row once)."""
        return self._format(r)[0]

    def _format(self, r: int) -> tuple[list[str], str | None]:
        i = self._perm[r]
        if self._formatter is None:
            return self._items[i], self._tips[i]
        if i not in self._shown:
            cells, tip = self._formatter(self._items[i])
            self._shown[i] = (list(cells), tip)
        return self._shown[i]

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Sort by SORT_ROLE values of `column` (see _sorted: numbers numerically, missing
        last either way); the selection follows its rows."""
        if not 0 <= column < len(self.headers):
            return
        self._order = (column, order)
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        items = [self._perm[i.row()] for i in old]
        self._perm = self._sorted(column, order)
        row_of = {item: r for r, item in enumerate(self._perm)} if old else {}
        self.changePersistentIndexList(old, [self.index(row_of[it], i.column())
                                             for it, i in zip(items, old)])
        self.layoutChanged.emit()

    def _sort_col(self, column: int) -> list[Any]:
        if column not in self._sort_cols:
            self._sort_cols[column] = (list(self._sort(column)) if callable(self._sort)
                                       else [r[column] for r in self._sort])
        return self._sort_cols[column]

    def _sorted(self, column: int, order) -> list[int]:
        """The view order by `column`: numbers numerically (bool and numpy numbers too), then
        text; missing values (None, NaN) last in either direction; stable."""
        col = self._sort_col(column)
        desc = order == Qt.SortOrder.DescendingOrder
        if (all(type(v) in (int, float) for v in col) and not any(v != v for v in col)) \
                or all(type(v) is str for v in col):  # the usual cases: one sort in C
            return sorted(range(len(col)), key=col.__getitem__, reverse=desc)
        present, missing = [], []
        for i, v in enumerate(col):
            (missing if _missing(v) else present).append(i)

        def key(i: int):
            v = col[i]
            try:
                return (0, float(v), "")
            except (TypeError, ValueError):
                return (1, 0.0, str(v))
        return sorted(present, key=key, reverse=desc) + missing

    def row_of(self, key) -> int:
        """The view row holding `key` (KEY_ROLE), -1 when none."""
        try:
            return self._perm.index(self._keys.index(key))
        except ValueError:
            return -1

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._perm)

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
            return self._format(r)[0][c]
        i = self._perm[r]
        if role == SORT_ROLE:
            v = self._sort_col(c)[i]
            return v if v is not None else ""
        if role == KEY_ROLE:
            return self._keys[i]
        if role == Qt.ItemDataRole.ForegroundRole and self._colours[i] is not None:
            return QBrush(self._colours[i])
        if role == Qt.ItemDataRole.FontRole and self._bold[i]:
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:  # plain text: a name may start with a tag
            cells, tip = self._format(r)
            own = (c in self.tip_columns or len(cells[c]) > 40) and not (tip or "").startswith(cells[c])
            return qt_plain_tip("\n".join(t for t in (cells[c] if own else None, tip) if t) or None)
        return None


def _missing(v) -> bool:
    """None or NaN: sorted last whatever the direction."""
    if v is None:
        return True
    try:
        return v != v
    except (TypeError, ValueError):
        return False


def sortable(model: RowsModel, parent=None) -> RowsModel:
    """The model to give a sorting view: RowsModel sorts itself (no proxy in between)."""
    return model
