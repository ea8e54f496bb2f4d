"""Metric comparison: badcase vs control per metric (means, diff %, Mann-Whitney U p,
BH-adjusted p, Cohen's d, n), sortable, significant rows marked; copy as Markdown or TSV.
Clicking a row shows that metric in the Distributions panel."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTableView, QVBoxLayout)

from widgets import palette
from widgets.base import Panel
from widgets.painters import comparison as painter
from widgets.painters.common import significant
from widgets.tablemodel import KEY_ROLE, RowsModel, sortable


class ComparisonPanel(Panel):
    key = "comparison"
    title = "Metric comparison"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = RowsModel([self.tr(h) for h in painter.HEADERS], self,
                               [self.tr(t) for t in painter.TIPS])
        self.proxy = sortable(self.model, self)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().hide()
        hh = self.view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setStretchLastSection(True)
        self.view.clicked.connect(lambda idx: session.set_metric(idx.data(KEY_ROLE)))
        self.note = QLabel(self.tr("★ significant: Benjamini-Hochberg adjusted p < 0.05 "
                                   "(Mann-Whitney U, two-sided). d = Cohen's d, badcase minus control."))
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        md, tsv = QPushButton(self.tr("Copy as Markdown")), QPushButton(self.tr("Copy as TSV"))
        md.clicked.connect(lambda: QGuiApplication.clipboard().setText(painter.to_markdown(self.value)))
        tsv.clicked.connect(lambda: QGuiApplication.clipboard().setText(painter.to_tsv(self.value)))
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(md)
        row.addWidget(tsv)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view, 1)
        lay.addLayout(row)

    def paint(self, rows) -> str | None:
        if not rows:
            return self.tr("No metric to compare: neither group has a value of any engine or "
                           "case metric (bind cases to trace requests to get TTFT, TPOT, ...).")
        cells = painter.comparison_rows(rows)
        sort = [[painter.sort_key(r, c) for c in range(len(painter.HEADERS))] for r in rows]
        sig = [significant(r) for r in rows]
        self.model.set_rows(cells, sort, keys=[r.get("metric") for r in rows],
                            colours=[QColor(palette.BAD) if s else None for s in sig], bold=sig,
                            tips=[r.get("reason") for r in rows])
        self.view.sortByColumn(5, Qt.SortOrder.AscendingOrder)
        return None

    def copy_text(self) -> str:
        return painter.to_tsv(self.value) if isinstance(self.value, list) else super().copy_text()
