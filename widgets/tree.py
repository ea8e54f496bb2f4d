"""Decision tree: node-link drawing (nodes coloured by error rate, riskiest branch outlined,
baseline shown), max_depth and min-leaf controls; clicking a node selects its cases."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene, QLabel, QSpinBox, QVBoxLayout

from explorer.core import bus
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.widgets.painters.tree import MAX_NODE_W, paint_tree, tree_tsv
from explorer.widgets.zoomview import MIN_WINDOW_PT, ZoomView
from explorer.core.i18n import _

PRINT_NODE_W = 160   # the print layout's node width (conditions on two lines) ...
PRINT_PT = 10.5      # ... and text size: >= 7 pt once the figure is scaled to the page


class _View(ZoomView):
    """The tree's view (widgets.zoomview: text >= 9 pt, pan, Ctrl+wheel); a click on a node
    emits nodeClicked(node id)."""
    nodeClicked = Signal(int)

    def mousePressEvent(self, ev):
        item = self.itemAt(ev.position().toPoint())
        while item is not None and item.data(0) is None:
            item = item.parentItem()
        if item is not None and ev.button() == Qt.MouseButton.LeftButton:
            self.nodeClicked.emit(int(item.data(0)))
        super().mousePressEvent(ev)


class TreePanel(Panel):
    topic = bus.SECTION["tree"]
    chart = True

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
        top.addWidget(QLabel(_("max depth")))
        top.addWidget(self.depth)
        top.addWidget(QLabel(_("min cases per leaf")))
        top.addWidget(self.leaf)
        top.addStretch(1)
        self.hint = QLabel(_("click a node to select its cases · drag to pan, Ctrl+wheel to zoom"))
        top.addWidget(self.hint)
        self.horizontal = False  # the print layout (reports): depth left to right
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
            return _("No decision tree: too few bound cases with engine metrics in both groups.")
        self.hint.setVisible(not self.horizontal)  # no "click" hint on a page
        font = self.font()
        if self.horizontal:
            font.setPointSizeF(PRINT_PT)
        self.view.font_pt = font.pointSizeF() if font.pointSizeF() > 0 else 9.5
        self.items = paint_tree(self.scene, tree, font, self.horizontal,
                                PRINT_NODE_W if self.horizontal else MAX_NODE_W)
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-20, -30, 20, 20))
        self._pens = {nid: QPen(item.pen()) for nid, item in self.items.items()}
        self._mark_selected()
        self.sentence.setText(str(tree.get("sentence") or ""))
        self.sentence.setVisible(bool(tree.get("sentence")))
        # a tree wider than the view opens on its riskiest branch, not its left edge
        path = [self.items[n].sceneBoundingRect() for n in tree.get("riskiest_path") or []
                if n in self.items]
        focus = None
        for rect in path:
            focus = rect if focus is None else focus.united(rect)
        self.view.focus = focus
        self.view.fit()
        return None

    def _clicked(self, node_id: int) -> None:
        self.selected_node = node_id
        self.session.select_tree_node(node_id)

    def _mark_selected(self) -> None:
        src = self.session.selection_source
        for nid, item in self.items.items():
            if src == ("tree", nid):
                item.setPen(QPen(QColor(palette.SELECTED), 4, Qt.PenStyle.DashLine))
            else:
                item.setPen(self._pens.get(nid, item.pen()))

    def set_print_layout(self, on: bool = True) -> None:
        """The layout for a page (reports): depth left to right with two-line conditions, so
        a tree of 8 leaves keeps its text at 7 pt or more at the page's width; always fitted."""
        self.horizontal = on
        self.hint.setVisible(not on)
        self.view.min_pt = None if on else MIN_WINDOW_PT
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if on
                                               else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if on
                                             else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        if self.value is not None:
            self.show_result(self.value)

    def copy_text(self) -> str:
        """The tree as TSV, one node a row: its condition, n, badcases and error rate."""
        nodes = (self.value or {}).get("nodes") if isinstance(self.value, dict) else None
        return tree_tsv(self.value) if nodes else super().copy_text()

    def click_node(self, node_id: int) -> None:
        """Simulate a user click on a node (tests, keyboard)."""
        item = self.items[node_id]
        pos = self.view.mapFromScene(item.sceneBoundingRect().center())
        from PySide6.QtTest import QTest
        QTest.mouseClick(self.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
