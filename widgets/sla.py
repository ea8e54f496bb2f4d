"""SLA attainment: the thresholds, the share of requests meeting them and goodput, and the
attainment per engine version / run / category / tenant."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout

from widgets.base import Panel
from widgets.painters.sla import paint_sla, summary


class SlaPanel(Panel):
    key = "sla"
    title = "SLA"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addWidget(self.plot_widget, 1)

    def paint(self, sla) -> str | None:
        msg = paint_sla(self.plot, sla)
        if msg:
            return self.tr(msg)
        self.summary.setText(summary(sla))
        return None

    def copy_text(self) -> str:
        return summary(self.value) if isinstance(self.value, dict) else super().copy_text()
