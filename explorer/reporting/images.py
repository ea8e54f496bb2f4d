"""Offscreen rendering of widgets to PNG (at a device pixel ratio) and SVG, and the Qt
application the renderer needs (offscreen when there is no display)."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QWidget

CJK_FAMILIES = ["DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC"]


def ensure_app() -> QApplication:
    """The running QApplication, or a new one (offscreen when no DISPLAY / WAYLAND_DISPLAY)."""
    app = QApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication([])
        f = QFont()
        f.setFamilies(CJK_FAMILIES)
        f.setPointSize(9)
        app.setFont(f)
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
    widget.render(p, QPoint(0, 0))
    p.end()
    return img


def save_png(widget: QWidget, path: Path, dpr: float = 2.0) -> Path:
    """Write the widget as PNG at `dpr` (2x by default). Raises OSError when it cannot write."""
    if not to_image(widget, dpr).save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    return path


def save_svg(widget: QWidget, path: Path, title: str = "") -> Path:
    """Write the widget as SVG through QSvgGenerator (vector where Qt paints vectors)."""
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(widget.size())
    gen.setViewBox(QRectF(0, 0, widget.width(), widget.height()))
    gen.setTitle(title)
    p = QPainter(gen)
    widget.render(p, QPoint(0, 0))
    p.end()
    return path
