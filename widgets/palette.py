"""The one colour palette of the app and the reports (colour-blind safe: Okabe & Ito, 2008,
"Color Universal Design", https://jfly.uni-koeln.de/color/).

Badcase and control keep the same two colours in every panel and every report image.
"""
from __future__ import annotations

from PySide6.QtGui import QColor

BAD = "#D55E00"        # vermillion: badcases, regressions, high error rate
CONTROL = "#0072B2"    # blue: the control group
SELECTED = "#CC79A7"   # reddish purple: the current selection
ACCENT = "#009E73"     # bluish green: attained / improvement
WARN = "#E69F00"       # orange: weak (level-3) bindings, warnings
NEUTRAL = "#999999"
TEXT = "#222222"
MUTED = "#666666"
BACKGROUND = "#FFFFFF"
GRID = "#E6E6E6"
HEATMAP_COLORMAP = "viridis"  # perceptually uniform, colour-blind safe (pyqtgraph built-in)


def qcolor(hex_colour: str, alpha: int = 255) -> QColor:
    c = QColor(hex_colour)
    c.setAlpha(alpha)
    return c


def error_rate_colour(rate: float | None) -> QColor:
    """Fill colour of a decision-tree node: white (0 % badcases) -> BAD (100 %); grey if unknown."""
    if rate is None or rate != rate:
        return QColor(NEUTRAL)
    r = min(max(float(rate), 0.0), 1.0)
    lo, hi = QColor("#F4F4F4"), QColor(BAD)
    return QColor(round(lo.red() + (hi.red() - lo.red()) * r),
                  round(lo.green() + (hi.green() - lo.green()) * r),
                  round(lo.blue() + (hi.blue() - lo.blue()) * r))
