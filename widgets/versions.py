"""Versions: the same metrics across engine versions of one benchmark, change % and regression
flags (table), with a bar chart of the changes."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QSplitter, QTableView, QVBoxLayout

from widgets import palette
from widgets.base import Panel
from widgets.painters.versions import HEADERS, empty_reason, paint_versions, versions_rows
from widgets.tablemodel import RowsModel, sortable


class VersionsPanel(Panel):
    key = "versions"
    title = "Versions"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = RowsModel([self.tr(h) for h in HEADERS], self)
        self.view = QTableView()
        self.view.setModel(sortable(self.model, self))
        self.view.setSortingEnabled(True)
        self.view.verticalHeader().hide()
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.plot_widget)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split, 1)
        lay.addWidget(self.note)

    def paint(self, versions) -> str | None:
        why = empty_reason(versions)
        if why:
            return self.tr(why)
        rows = versions_rows(versions)
        self.model.set_rows([c for c, _ in rows],
                            colours=[QColor(palette.BAD) if reg else None for _, reg in rows],
                            bold=[reg for _, reg in rows])
        msg = paint_versions(self.plot, versions)
        self.plot_widget.setVisible(msg is None)
        self.note.setText(self.tr(msg) if msg else self.tr("▼ regression: the change is significant "
                                                          "and in the worse direction"))
        return None
