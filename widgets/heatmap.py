"""Heatmap: x bins x y bins, each cell the mean of a value metric (default TPOT x batch-size
entropy -> scheduling delay), colour bar, metric pickers, hover tooltip with the cell's n and
value; clicking a cell selects its requests."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QComboBox, QLabel, QToolTip, QVBoxLayout

from widgets.base import Panel
from widgets.painters.common import label
from widgets.painters.heatmap import cell_at, cell_text, paint_heatmap

try:  # the metrics the window-level heatmap accepts (Qt-free, cheap to import)
    from explorer.core.analysis.heatmap import WINDOW_METRICS as CHOICES
except ImportError:  # pragma: no cover - analysis core not installed
    CHOICES = ("tpot_ms", "batch_size_entropy", "queue_ms", "ttft_ms", "e2e_ms", "batch_size")


class HeatmapPanel(Panel):
    key = "heatmap"
    title = "Heatmap"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.boxes = {}
        top = self.top
        for name, text in (("x_metric", self.tr("x")), ("y_metric", self.tr("y")),
                           ("value_metric", self.tr("colour = mean of"))):
            box = QComboBox()
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
            for m in CHOICES:
                box.addItem(label(m), m)
            box.activated.connect(lambda _i, n=name, b=box: session.set_params("heatmap", **{n: b.currentData()}))
            top.addWidget(QLabel(text))
            top.addWidget(box, 1)
            self.boxes[name] = box
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.plot = self.glw.addPlot()
        self.plot.setMenuEnabled(False)
        self.glw.scene().sigMouseMoved.connect(self._hover)
        self.glw.scene().sigMouseClicked.connect(self._click)
        self.hint = QLabel(self.tr("hover a cell for its n and value; click it to select its requests"))
        self.hint.setObjectName("muted")
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.glw, 1)
        lay.addWidget(self.hint)

    def paint(self, hm) -> str | None:
        hm = hm or {}
        for name, box in self.boxes.items():
            m = hm.get(name)
            if m and box.findData(m) < 0:
                box.addItem(label(m), m)
            if m:
                box.setCurrentIndex(box.findData(m))
        msg = paint_heatmap(self.plot, hm)
        if msg:
            return msg + "\n" + self.tr("Choose other metrics above.")
        if msg is None:
            self.hint.setText(self.tr("%1 · hover a cell for its n and value; click it to select its requests")
                              .replace("%1", f"{hm.get('level', 'request')} level, n = {hm.get('n_items', '–')}"))
        return msg

    def _data_pos(self, scene_pos: QPointF):
        if not isinstance(self.value, dict) or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.plot.getViewBox().mapSceneToView(scene_pos)
        return cell_at(self.value, p.x(), p.y())

    def _hover(self, scene_pos) -> None:
        cell = self._data_pos(scene_pos)
        if cell is None:
            QToolTip.hideText()
            return
        gp = self.glw.mapToGlobal(self.glw.mapFromScene(scene_pos))
        QToolTip.showText(gp, cell_text(self.value, *cell), self.glw)

    def _click(self, ev) -> None:
        cell = self._data_pos(ev.scenePos())
        if cell is not None:
            self.session.select_heatmap_cell(*cell)

    def cell_scene_pos(self, ix: int, iy: int) -> QPointF:
        """Scene position of the centre of cell (ix, iy) (tests)."""
        xe, ye = self.value["x_edges"], self.value["y_edges"]
        return self.plot.getViewBox().mapViewToScene(QPointF((xe[ix] + xe[ix + 1]) / 2,
                                                             (ye[iy] + ye[iy + 1]) / 2))
