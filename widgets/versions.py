"""Versions: the same metrics across engine versions of one benchmark, change % and regression
flags (table), with a bar chart of the changes."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QSplitter, QTableView, QVBoxLayout

from explorer.core import bus
from explorer.core.i18n import _
from explorer.core.names import plural
from explorer.widgets import palette
from explorer.widgets.base import Panel, SelectionLine
from explorer.widgets.colfit import ColumnFitter
from explorer.widgets.painters.versions import HEADERS, empty_reason, paint_versions, versions_rows
from explorer.widgets.tablemodel import RowsModel, sortable


class VersionsPanel(SelectionLine, Panel):
    topic = bus.SECTION["versions"]
    chart = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = RowsModel([_(h) for h in HEADERS], self)
        self.view = QTableView()
        self.view.setModel(sortable(self.model, self))
        self.view.setSortingEnabled(True)
        self.view.verticalHeader().hide()
        # the columns fit the view (colfit): benchmark, metric, then flag give way, numbers never
        # (at 1366x768 p and Flag were behind the scroll bar); the whole text on hover
        self.model.tip_columns = {0, 1, 8}
        self.fitter = ColumnFitter(self.view, (0, 1, 8), text_floor=112)  # "▼ regression" whole
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        split = self.split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.plot_widget)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        self._selection_line()  # which releases served the selected cases
        lay.addWidget(self.sel_label)
        lay.addWidget(split, 1)
        lay.addWidget(self.note)

    def paint(self, versions) -> str | None:
        why = empty_reason(versions)
        if why:
            return why  # the painter's message, already in the current language
        rows = versions_rows(versions)
        self.model.set_rows([c for c, _ in rows],
                            colours=[QColor(palette.BAD) if reg else None for _, reg in rows],
                            bold=[reg for _, reg in rows])
        msg = paint_versions(self.plot, versions)
        self.plot_widget.setVisible(msg is None)
        self.fitter.refit()
        self.fit_table()
        self.note.setText(msg if msg else _("▼ regression: the change is significant "
                                            "and in the worse direction"))
        return None

    def table_height(self) -> int:
        """The height that shows the table's every row (header, rows, scroll bar, frame)."""
        v = self.view
        rows = sum(v.rowHeight(r) or v.verticalHeader().defaultSectionSize()
                   for r in range(self.model.rowCount()))
        return (v.horizontalHeader().sizeHint().height() + rows + 2 * v.frameWidth()
                + v.horizontalScrollBar().sizeHint().height() + 4)

    def fit_table(self) -> None:
        """Give the table the rows it has, up to half the panel; the chart the rest (at 1366x768
        the chart took all but three of the five rows)."""
        total = self.split.height() - self.split.handleWidth()
        if total <= 0 or self.plot_widget.isHidden():
            return
        table = min(self.table_height(), total // 2)
        self.split.setSizes([table, total - table])

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        if self.model.rowCount():
            self.fit_table()

    def showEvent(self, ev) -> None:  # painted behind another tab: sized when first shown
        super().showEvent(ev)
        if self.model.rowCount():
            self.fit_table()

    def selection_text(self) -> str:
        """'Decision tree: node 3 ran on: 0.6.1: 40 case(s) (38 badcases); 0.5.2: 5 (2)'."""
        rows = (self.selection or {}).get("versions") or []
        if not rows:
            return ""
        parts = [_("{version}: {cases} ({badcases})").format(
                version=r["engine_version"], cases=plural(r['n'], "case"),
                badcases=plural(r['n_bad'], "badcase"))
                 for r in sorted(rows, key=lambda r: -r["n"])]
        return _("{selection} ran on {versions}").format(selection=self.selection_name(),
                                                         versions="; ".join(parts))

    def copy_text(self) -> str:
        """The table as TSV (every row, full text), then the selection's releases."""
        m = self.model
        if not m.rows:
            return super().copy_text()
        lines = ["\t".join(m.headers)] + ["\t".join(r) for r in m.rows]
        return "\n".join(lines + [t for t in (self.selection_text(),) if t])
