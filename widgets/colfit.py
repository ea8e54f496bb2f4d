"""Table columns that fit their view (issue 33: the metric comparison scrolled sideways for its
last columns at 1,366 and 1,920 px). Every column asks for its widest cell or header; when they
do not fit, the widest give way first (water-filling), each down to its floor: a number column's
floor is its widest cell (numbers are never elided), a text column's a few characters. Headers
and text cells are elided then, the whole text on hover (the model's tool tips)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from PySide6.QtCore import QObject, QEvent
from PySide6.QtWidgets import QHeaderView, QTableView


def fit_widths(want: Sequence[int], floors: Sequence[int], room: int) -> list[int]:
    """Widths within `room` px: each column's `want`, capped at one common level L (the widest
    shrink first) but never below its floor (min(want, floor)). The largest L that fits; when
    even the floors do not fit, the floors (the view scrolls)."""
    want = [max(0, int(w)) for w in want]
    lows = [min(w, max(0, int(f))) for w, f in zip(want, floors)]

    def at(level: int) -> list[int]:
        return [max(lo, min(w, level)) for w, lo in zip(want, lows)]

    if sum(want) <= room:
        return want
    lo, hi = 0, max(want, default=0)
    while lo < hi:                      # largest level whose widths fit
        mid = (lo + hi + 1) // 2
        if sum(at(mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return at(lo)


def fit_columns(view: QTableView, elastic: Iterable[int] = (), text_floor: int = 72) -> list[int]:
    """Resize `view`'s columns to fit its viewport: the columns in `elastic` (names, intervals)
    may shrink to `text_floor` px, in the order given (the first gives way alone, the next only
    when that is not enough), the others to their widest cell (their header may elide)."""
    hh = view.horizontalHeader()
    elastic = list(elastic)
    want, cells = [], []
    for c in range(hh.count()):
        hidden = hh.isSectionHidden(c)
        cells.append(0 if hidden else view.sizeHintForColumn(c))
        want.append(0 if hidden else max(cells[-1], hh.sectionSizeHint(c)))
    room = view.viewport().width()
    for k in range(1, len(elastic) + 1):
        give = set(elastic[:k])
        floors = [text_floor if c in give else max(cells[c], 24) for c in range(len(want))]
        widths = fit_widths(want, floors, room)
        if sum(widths) <= room:
            break
    else:
        widths = fit_widths(want, [max(cells[c], 24) for c in range(len(want))], room) \
            if not elastic else widths
    for c, w in enumerate(widths):
        if not hh.isSectionHidden(c) and hh.sectionSize(c) != w:
            hh.resizeSection(c, w)
    return widths


class ColumnFitter(QObject):
    """Keeps a view's columns fitted (fit_columns) when its viewport is resized; call refit()
    after new rows or headers. The columns stay user-resizable (Interactive)."""

    def __init__(self, view: QTableView, elastic: Iterable[int] = (), text_floor: int = 72,
                 spare: Iterable[int] = ()):
        """spare: columns hidden (their text in the row's tool tip) while the first elastic
        column would be elided."""
        super().__init__(view)
        self.view, self.elastic, self.text_floor = view, tuple(elastic), text_floor
        self.spare = tuple(spare)
        hh = view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        view.viewport().installEventFilter(self)

    def refit(self) -> list[int]:
        hh = self.view.horizontalHeader()
        for c in self.spare:
            hh.setSectionHidden(c, False)
        widths = fit_columns(self.view, self.elastic, self.text_floor)
        first = self.elastic[0] if self.elastic else None
        if self.spare and first is not None and widths[first] < self.view.sizeHintForColumn(first):
            for c in self.spare:
                hh.setSectionHidden(c, True)
            widths = fit_columns(self.view, self.elastic, self.text_floor)
        return widths

    def hidden(self) -> list[int]:
        hh = self.view.horizontalHeader()
        return [c for c in range(hh.count()) if hh.isSectionHidden(c)]

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize:
            self.refit()
        return False
