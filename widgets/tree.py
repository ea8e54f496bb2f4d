"""Decision tree: node-link drawing (nodes coloured by error rate, riskiest branch outlined,
baseline shown), max_depth and min-leaf controls; clicking a node selects its cases."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QLabel, QSpinBox, QVBoxLayout

from widgets import palette
from widgets.base import Panel
from widgets.painters.tree import paint_tree


class _View(QGraphicsView):
    nodeClicked = Signal(int)

    def mousePressEvent(self, ev):
        item = self.itemAt(ev.position().toPoint())
        while item is not None and item.data(0) is None:
            item = item.parentItem()
        if item is not None and ev.button() == Qt.MouseButton.LeftButton:
            self.nodeClicked.emit(int(item.data(0)))
        super().mousePressEvent(ev)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.fit()

    def fit(self):
        r = self.scene().itemsBoundingRect().adjusted(-10, -10, 10, 10)
        if r.isValid():
            self.fitInView(r, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() > 1.3:  # never blow a small tree up past 130 %
                self.resetTransform()
                self.scale(1.3, 1.3)
                self.centerOn(r.center())


class TreePanel(Panel):
    key = "tree"
    title = "Decision tree"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.scene = QGraphicsScene(self)
        self.view = _View(self.scene)
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setBackgroundBrush(QColor(palette.BACKGROUND))
        self.view.nodeClicked.connect(self._clicked)
        self.items: dict = {}
        self._pens: dict = {}
        self.depth = QSpinBox()
        self.depth.setRange(1, 8)
        self.depth.setValue(3)
        self.leaf = QSpinBox()
        self.leaf.setRange(1, 500)
        self.leaf.setValue(5)
        for box, name in ((self.depth, "max_depth"), (self.leaf, "min_samples_leaf")):
            box.setKeyboardTracking(False)
            box.valueChanged.connect(lambda v, n=name: session.set_params("tree", **{n: int(v)}))
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.sentence.setObjectName("muted")
        top = self.top
        top.addWidget(QLabel(self.tr("max depth")))
        top.addWidget(self.depth)
        top.addWidget(QLabel(self.tr("min cases per leaf")))
        top.addWidget(self.leaf)
        top.addStretch(1)
        top.addWidget(QLabel(self.tr("click a node to select its cases")))
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.sentence)
        session.selectionChanged.connect(self._mark_selected)

    def paint(self, tree) -> str | None:
        nodes = (tree or {}).get("nodes") or []
        for box, key in ((self.depth, "max_depth"), (self.leaf, "min_samples_leaf")):
            v = (tree or {}).get(key)
            if isinstance(v, int):
                box.blockSignals(True)
                box.setValue(v)
                box.blockSignals(False)
        if not nodes:
            return self.tr("No decision tree: too few bound cases with engine metrics in both groups.")
        self.items = paint_tree(self.scene, tree, self.font())
        self._pens = {nid: QPen(item.pen()) for nid, item in self.items.items()}
        self._mark_selected()
        self.sentence.setText(str(tree.get("sentence") or ""))
        self.sentence.setVisible(bool(tree.get("sentence")))
        self.view.fit()
        return None

    def _clicked(self, node_id: int) -> None:
        self.selected_node = node_id
        self.session.select_tree_node(node_id)

    def _mark_selected(self) -> None:
        label = self.session.selection_label or ""
        for nid, item in self.items.items():
            if label == self.session.tr("tree node %1").replace("%1", str(nid)):
                item.setPen(QPen(QColor(palette.SELECTED), 4, Qt.PenStyle.DashLine))
            else:
                item.setPen(self._pens.get(nid, item.pen()))

    def click_node(self, node_id: int) -> None:
        """Simulate a user click on a node (tests, keyboard)."""
        item = self.items[node_id]
        pos = self.view.mapFromScene(item.sceneBoundingRect().center())
        from PySide6.QtTest import QTest
        QTest.mouseClick(self.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
