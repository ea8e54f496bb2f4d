"""Engine statistics: counter tracks (running, waiting, GPU KV-cache usage, prefix-cache hit
rate) over time, one line per stats run and engine (data-parallel rank), from the engine logs
and /metrics scrapes loaded; a summary line above."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout

from explorer.core import bus
from explorer.widgets.base import Panel
from explorer.widgets.painters.engine import paint_engine, summary


class EnginePanel(Panel):
    topic = bus.SECTION["engine"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)  # run ids are file names
        self.tracks = pg.GraphicsLayoutWidget()
        self.tracks.setBackground("w")
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addWidget(self.tracks, 1)

    def paint(self, value) -> str | None:
        msg = paint_engine(self.tracks, value)
        if msg:
            return msg  # the painter's message, already in the current language
        self.summary.setText(summary(value))
        return None

    def copy_text(self) -> str:
        return summary(self.value) if isinstance(self.value, dict) else super().copy_text()
