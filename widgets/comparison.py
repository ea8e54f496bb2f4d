"""Metric comparison: badcase vs control per metric (means, diff %, Mann-Whitney U p,
BH-adjusted p, Cohen's d, n), sortable, significant rows marked; copy as Markdown or TSV.
Clicking a row shows that metric in the Distributions panel."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QLabel,
                               QPushButton, QTableView, QVBoxLayout)

from explorer.core import bus
from explorer.core.i18n import N_, _
from explorer.core.names import plural
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.widgets.colfit import ColumnFitter
from explorer.widgets.painters import comparison as painter
from explorer.widgets.painters.common import significant
from explorer.widgets.tablemodel import KEY_ROLE, RowsModel, sortable


# what the table compares: the cohort, or the selection (Session "selection" payload keys)
VIEWS = (("cohort", N_("Badcases vs control")),
         ("vs_rest", N_("Selection vs rest of the cohort")),
         ("vs_control", N_("Selected badcases vs control")))


ELASTIC = (0,)  # the metric's name, elided last (whole on hover)
SPARE = (7,)     # "r (rank) [95% CI]": hidden when the room is short, then in the row's tool tip


def header_tips(heads) -> list[str]:
    """Each header's tool tip: its whole title (a narrow column elides it), then what it means."""
    return [f"{_(h)}: {_(t)}" for h, t in zip(heads, painter.TIPS)]


def row_tip(row: dict, cells: list[str]) -> str:
    """A row's tool tip: the metric's whole name, its rank correlation and interval (the column
    a narrow table hides), and why a value is missing."""
    parts = [cells[0], f"{_(painter.HEADERS[7])}: {cells[7]}", row.get("reason")]
    return "\n".join(p for p in parts if p)


class ComparisonPanel(Panel):
    topic = bus.SECTION["comparison"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.selection: dict | None = None
        self.shown: list | None = None  # the rows on screen (cohort's or the selection's)
        self.what = QComboBox()
        for key, text in VIEWS:
            self.what.addItem(_(text), key)
        self.what.setToolTip(_("Compare the cohort's badcases with the control, or the "
                               "selection (a tree node, a heatmap cell, picked cases) with "
                               "the rest of the cohort or with the control"))
        self.what.currentIndexChanged.connect(lambda _i: self._repaint())
        self.top.addWidget(QLabel(_("Compare")))
        self.top.addWidget(self.what, 1)
        self.model = RowsModel([_(h) for h in painter.HEADERS], self, header_tips(painter.HEADERS))
        self.model.tip_columns = set(ELASTIC)  # elided when narrow: whole on hover
        self.proxy = sortable(self.model, self)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().hide()
        # every column in view without scrolling sideways: the metric and the rank interval
        # give way first (elided, whole on hover), numbers never elide; headers whole on hover
        self.fitter = ColumnFitter(self.view, ELASTIC, spare=SPARE)
        self.view.clicked.connect(lambda idx: session.set_metric(idx.data(KEY_ROLE)))
        self.note = QLabel(_("★ significant: Benjamini-Hochberg adjusted p < 0.05 "
                             "(Mann-Whitney U, two-sided). d = Cohen's d, badcase minus control."))
        self._cohort_note = self.note.text()
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        md, tsv = QPushButton(_("Copy as Markdown")), QPushButton(_("Copy as TSV"))
        md.clicked.connect(lambda: QGuiApplication.clipboard().setText(painter.to_markdown(self.shown)))
        tsv.clicked.connect(lambda: QGuiApplication.clipboard().setText(painter.to_tsv(self.shown)))
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(md)
        row.addWidget(tsv)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view, 1)
        lay.addLayout(row)

    def show_selection(self, selection: dict | None) -> None:
        """A new selection shows itself against the rest of the cohort; none: the cohort."""
        self.selection = selection
        model = self.what.model()
        for i in (1, 2):
            model.item(i).setEnabled(selection is not None)
        self.what.blockSignals(True)
        self.what.setCurrentIndex(1 if selection is not None else 0)
        self.what.blockSignals(False)
        self._repaint()

    def view_key(self) -> str:
        return self.what.currentData() or "cohort"

    def _repaint(self) -> None:
        if self.value is not None:
            self.show_result(self.value)

    def paint(self, rows) -> str | None:
        key, sel = self.view_key(), self.selection
        self.shown = rows
        if key != "cohort" and sel is not None:
            if sel.get(key) is None:
                self.shown = None
                return _("No comparison for {selection}: {reason}").format(
                        selection=self.selection_name(), reason=str(sel.get(key + "_reason") or ""))
            rows = self.shown = sel[key]
        heads = painter.HEADERS if key == "cohort" or sel is None else \
            painter.headers_for("rest" if key == "vs_rest" else "control")
        self.model.set_headers([_(h) for h in heads])  # painter headers: gettext (N_) marks
        self.model.header_tips = header_tips(heads)
        if key == "cohort" or sel is None:
            self.note.setText(self._cohort_note)
        else:
            self.note.setText(_("{selection} ({cases}, {badcases}) against {control}. ★ BH-adjusted p < 0.05; "
                                "d = Cohen's d, selected minus {control}.").format(selection=self.selection_name(), cases=plural(sel.get('n', 0), "case"), badcases=plural(sel.get('n_bad', 0), "badcase"), control=_("the rest of the cohort") if key == "vs_rest"
                                       else _("the control")))
        if not rows:
            return _("No metric to compare: neither group has a value of any engine or "
                     "case metric (bind cases to trace requests to get TTFT, TPOT, ...).")
        cells = painter.comparison_rows(rows)
        sort = [[painter.sort_key(r, c) for c in range(len(painter.HEADERS))] for r in rows]
        sig = [significant(r) for r in rows]
        self.model.set_rows(cells, sort, keys=[r.get("metric") for r in rows],
                            colours=[QColor(palette.BAD) if s else None for s in sig], bold=sig,
                            tips=[row_tip(r, c) for r, c in zip(rows, cells)])
        self.view.sortByColumn(5, Qt.SortOrder.AscendingOrder)
        self.fitter.refit()
        return None

    def copy_text(self) -> str:
        return painter.to_tsv(self.shown) if isinstance(self.shown, list) else super().copy_text()
