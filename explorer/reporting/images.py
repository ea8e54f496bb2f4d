"""Offscreen rendering of widgets to PNG (at a device pixel ratio) and SVG, and the Qt
application the renderer needs (offscreen when there is no display)."""
from __future__ import annotations

import os
from pathlib import Path

from explorer.core.atomic import write_bytes
from explorer.core.escape import xml_bytes
from PySide6.QtCore import QBuffer, QIODevice, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (QAbstractButton, QAbstractScrollArea, QAbstractSpinBox,
                               QApplication, QComboBox, QHBoxLayout, QLabel, QLayout,
                               QTableView, QWidget)

CONTROLS = (QAbstractButton, QComboBox, QAbstractSpinBox)

# Symbola (Debian fonts-symbola, scripts/setup.sh): outline emoji and symbols, so an emoji in a
# cluster name prints in the PDF instead of an empty box (colour-bitmap emoji fonts do not)
CJK_FAMILIES = ["DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Symbola"]


def ensure_app() -> QApplication:
    """The running QApplication, or a new one (offscreen when no DISPLAY / WAYLAND_DISPLAY)."""
    from explorer.qtmessages import filter_qt_noise
    filter_qt_noise()
    app = QApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication([])
        f = QFont()
        f.setFamilies(CJK_FAMILIES)
        f.setPointSize(9)
        app.setFont(f)
    from explorer import translators
    translators.sync(app)
    from explorer.widgets import paint_guard
    paint_guard.install()  # a chart item whose paint() raises: that picture is left out
    return app


def settle(widget: QWidget, size: QSize) -> None:
    """Lay out and polish a widget at `size` without putting it on a screen."""
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.resize(size)
    widget.show()
    for _ in range(3):
        QGuiApplication.processEvents()


def to_image(widget: QWidget, dpr: float = 2.0) -> QImage:
    """The widget painted into a QImage at `dpr` device pixels per logical pixel."""
    size = widget.size()
    img = QImage(int(size.width() * dpr), int(size.height() * dpr), QImage.Format.Format_ARGB32)
    img.setDevicePixelRatio(dpr)
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        widget.render(p, QPoint(0, 0))
    finally:  # a painter left active on the image crashes the process when the image goes
        p.end()
    return img


def save_image(img: QImage, path: Path) -> Path:
    """Write a QImage as PNG, atomically (explorer.core.atomic): encoded in memory, then one
    write whose failure is seen (a full disk raises OSError ENOSPC naming `path`)."""
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not img.save(buf, "PNG"):
        raise OSError(f"{path}: the picture could not be encoded as PNG")
    return write_bytes(path, bytes(buf.data()))


def save_png(widget: QWidget, path: Path, dpr: float = 2.0) -> Path:
    """Write the widget as PNG at `dpr` (2x by default). Raises OSError when it cannot write;
    whatever the widget's painting raises propagates, and nothing is written."""
    return save_image(to_image(widget, dpr), path)


def save_scene_png(scene, path: Path, dpr: float = 2.0, margin: float = 10.0) -> Path:
    """Write a QGraphicsScene (a figure drawn at its natural size: the causal graph) as PNG
    at `dpr`, cropped to its items. Raises OSError when it cannot write."""
    r = scene.itemsBoundingRect().adjusted(-margin, -margin, margin, margin)
    img = QImage(max(1, int(r.width() * dpr)), max(1, int(r.height() * dpr)), QImage.Format.Format_ARGB32)
    img.setDevicePixelRatio(dpr)
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        scene.render(p, QRectF(0, 0, r.width(), r.height()), r)
    finally:
        p.end()
    return save_image(img, path)


def save_svg(widget: QWidget, path: Path, title: str = "") -> Path:
    """Write the widget as SVG through QSvgGenerator (vector where Qt paints vectors), into
    memory first, then atomically (explorer.core.atomic)."""
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(widget.size())
    gen.setViewBox(QRectF(0, 0, widget.width(), widget.height()))
    gen.setTitle(title)
    p = QPainter(gen)
    try:
        widget.render(p, QPoint(0, 0))
    finally:
        p.end()
    # XML 1.0 has no control characters (not even escaped): a name holding ESC or NUL made
    # the SVG unreadable; they are dropped (escape.xml_bytes)
    return write_bytes(path, xml_bytes(bytes(buf.data())))


PRINT_PT = 7.2      # the smallest chart text on the PDF page
PAGE_PX_PER_PT = 2  # the PDF page: 144 px per inch, 72 pt per inch
TEXT_WIDTH = 920    # page px a figure is printed at (html.print_width)


def print_fonts(panel: QWidget, width: int, page_width: int = TEXT_WIDTH) -> int:
    """Chart text (pyqtgraph axes: ticks and labels; titles) of a panel pictured `width` px wide
    and printed `page_width` page px wide, sized to PRINT_PT on the page (the window's 8-9 px
    axis text printed at 3-5 pt). Returns the pixel size used."""
    import pyqtgraph as pg
    px = max(11, round(PRINT_PT * PAGE_PX_PER_PT * width / page_width + 0.49))
    font = QFont()
    font.setFamilies(CJK_FAMILIES)
    font.setPixelSize(px)
    for view in panel.findChildren(pg.GraphicsView):
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem):
                item.label.setFont(font)
                item.setStyle(tickFont=font)  # and resizes the axis to the new text
            elif isinstance(item, pg.LabelItem):
                item.item.setFont(font)
    return px


def report_mode(panel: QWidget) -> None:
    """Make a panel look like a printed figure: hide its controls (buttons, pickers, spin boxes)
    with the labels of their tool rows, and turn scroll bars off. The content is untouched."""
    from explorer.widgets.flow import FlowLayout
    for lay in panel.findChildren(QLayout):
        if not isinstance(lay, (QHBoxLayout, FlowLayout)):
            continue
        items = [lay.itemAt(i).widget() for i in range(lay.count())]
        widgets = [w for w in items if w is not None]
        if any(isinstance(w, CONTROLS) for w in widgets):
            for w in widgets:  # captions of controls go; a long note (a legend) stays
                if isinstance(w, CONTROLS) or (isinstance(w, QLabel) and len(w.text()) < 48):
                    w.hide()
    for w in panel.findChildren(QWidget):
        if isinstance(w, CONTROLS):
            w.hide()
    for area in panel.findChildren(QAbstractScrollArea):
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)


def scroll_overflow(panel: QWidget) -> int:
    """Pixels of height the panel's scroll areas (a QScrollArea's widget, a QTextEdit's
    document) need to show all their content: positive to grow, 0 when everything fits."""
    from PySide6.QtWidgets import QPlainTextEdit, QScrollArea, QTextEdit
    deltas = [0]
    for area in panel.findChildren(QScrollArea):
        content = area.widget()
        if content is None or not area.isVisible():
            continue
        width = area.viewport().width()
        need = (content.heightForWidth(width) if content.hasHeightForWidth()
                else content.sizeHint().height())
        deltas.append(need - area.viewport().height())
    for edit in panel.findChildren(QTextEdit):  # a narrative (the conclusion) shown whole
        if not edit.isVisible() or isinstance(edit, QPlainTextEdit):
            continue
        doc = edit.document()
        doc.setTextWidth(edit.viewport().width())
        deltas.append(int(doc.size().height()) + 4 - edit.viewport().height())
    return max(deltas)


def table_overflow(panel: QWidget) -> int:
    """Pixels of height the panel's visible tables need to show every row and no empty tail:
    positive to grow, negative to shrink, 0 without a table."""
    deltas = []
    for t in panel.findChildren(QTableView):
        if not t.isVisible() or t.model() is None:
            continue
        rows = sum(t.rowHeight(r) for r in range(t.model().rowCount()))
        need = rows + t.horizontalHeader().height() + 2 * t.frameWidth() + 4
        deltas.append(need - t.height())
    return max(deltas) if deltas else 0


def axis_label_overflow(panel: QWidget) -> int:
    """Pixels of height the panel's charts lack to show their vertical axis titles whole (a
    rotated title longer than its axis is clipped at both ends): 0 when every one fits."""
    import pyqtgraph as pg
    deltas = [0]
    for view in panel.findChildren(pg.GraphicsView):
        if not view.isVisible():
            continue
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.orientation in ("left", "right") \
                    and item.isVisible() and item.label.isVisible() and item.labelText:
                need = item.label.boundingRect().width() + 8
                deltas.append(int(need - item.size().height() + 0.99))
    return max(deltas)
