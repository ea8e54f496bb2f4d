"""A QGraphicsView for figures with text (decision tree, causal graph): fitted to the view, but
never shrinking the text below min_pt (then the figure is panned by dragging) nor magnifying it
past max_scale; Ctrl+wheel zooms, a double-click on empty space fits it again. min_pt None (a
report's picture): always fitted whole."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QGraphicsView

MIN_WINDOW_PT = 9.0


class ZoomView(QGraphicsView):
    min_pt: float | None = MIN_WINDOW_PT
    font_pt: float = 9.5      # the scene's text size at scale 1
    max_scale: float = 1.3
    zoomed = False            # the user zoomed: resizes keep the scale
    focus = None              # QRectF (scene) to show first when the figure does not fit

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)

    def wheelEvent(self, ev: QWheelEvent) -> None:
        if ev.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(1.15 if ev.angleDelta().y() > 0 else 1 / 1.15)
            ev.accept()
            return
        super().wheelEvent(ev)

    def zoom(self, factor: float) -> None:
        """Zoom about the mouse (also below the text floor: the user asked for it)."""
        self.zoomed = True
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.scale(factor, factor)

    def text_pt(self) -> float:
        """The scene's text size on screen, in points."""
        return self.font_pt * self.transform().m11()

    def mouseDoubleClickEvent(self, ev):
        if self.itemAt(ev.position().toPoint()) is None:
            self.zoomed = False
            self.fit()
        super().mouseDoubleClickEvent(ev)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        if not self.zoomed:
            self.fit()

    def fit(self):
        r = self.scene().itemsBoundingRect().adjusted(-10, -10, 10, 10)
        if not r.isValid():
            return
        self.fitInView(r, Qt.AspectRatioMode.KeepAspectRatio)
        k = self.transform().m11()
        floor = (self.min_pt / self.font_pt) if self.min_pt else 0.0
        if k > self.max_scale or k < floor:
            self.resetTransform()
            k = self.max_scale if k > self.max_scale else floor
            self.scale(k, k)
            # too large to fit: show its top left (the tree's root, the graph's causes), or
            # the part that matters most (`focus`: the tree's riskiest branch) from the top
            f = self.focus
            if k == floor and f is not None and f.isValid():
                half_w, half_h = self.viewport().width() / (2 * k), self.viewport().height() / (2 * k)
                x = min(max(f.center().x(), r.left() + half_w), r.right() - half_w)
                y = f.top() - 10 + half_h if f.height() + 20 > 2 * half_h else f.center().y()
                self.centerOn(x, y)
                return
            self.centerOn(r.left() + self.viewport().width() / (2 * k) if k == floor else r.center().x(),
                          r.top() + self.viewport().height() / (2 * k) if k == floor else r.center().y())
