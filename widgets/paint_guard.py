"""Keep a chart item whose paint() raises from crashing the process.

With PySide6 6.11 an exception raised in a Python override of QGraphicsItem.paint leaves
Python's error indicator set while Qt goes on drawing the scene; the next Python override Qt
calls (the next item's boundingRect) then crashes the interpreter with a segmentation fault
(reproduced with pyqtgraph's PlotCurveItem in `report --format png` and in a bare
QGraphicsScene). pyqtgraph's items all paint in Python, so one value an item cannot draw would
take the window, or the report, down with it.

install() wraps the paint() of every pyqtgraph graphics item class once: an exception there is
handed to sys.excepthook the first time that item fails (the window's hook logs it and says so
in a dialog; the report's bundle leaves that panel's picture out and names it) and the item
draws nothing that time; the rest of the scene is drawn.
"""
from __future__ import annotations

import functools
import sys

_FAILED_ATTR = "_te_paint_failed"


def _guarded(paint):
    @functools.wraps(paint)
    def paint_or_report(self, *args, **kwargs):
        try:
            return paint(self, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - raising into Qt would crash the process
            if not getattr(self, _FAILED_ATTR, False):
                setattr(self, _FAILED_ATTR, True)  # reported once: paint runs on every repaint
                sys.excepthook(type(e), e, e.__traceback__)
            return None
    paint_or_report.paint_guarded = True
    return paint_or_report


def _subclasses(cls) -> list[type]:
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        for s in c.__subclasses__():
            if s not in out:
                out.append(s)
                todo.append(s)
    return out


def install() -> int:
    """Wrap paint() of every pyqtgraph QGraphicsItem subclass that defines one (idempotent);
    returns how many were wrapped by this call."""
    import pyqtgraph  # noqa: F401 - imports its graphics items, so they are subclasses below
    from PySide6.QtWidgets import QGraphicsItem

    n = 0
    for cls in _subclasses(QGraphicsItem):
        paint = cls.__dict__.get("paint")
        if (paint is None or not cls.__module__.startswith("pyqtgraph")
                or getattr(paint, "paint_guarded", False)):
            continue
        setattr(cls, "paint", _guarded(paint))
        n += 1
    return n
