"""Dock tabs that fit their bar: every tab of a group reachable without the scroll arrows
(issue 33: at 1,366 px What-if and Replay sat behind the tab scroller). A bar wider than its
room first loses padding, then a point of font size; the names stay whole (never elided)."""
from __future__ import annotations

from PySide6.QtWidgets import QTabBar

# from roomy to compact: the first that fits is used
_SELECTED = " QTabBar::tab:selected { border-bottom: 2px solid #0072B2; font-weight: bold; }"
STYLES = ("", "QTabBar::tab { padding: 3px 6px; }" + _SELECTED,
          "QTabBar::tab { padding: 3px 4px; font-size: 9pt; }" + _SELECTED,
          "QTabBar::tab { padding: 2px 3px; font-size: 8pt; }" + _SELECTED)


def fit_tab_bar(bar: QTabBar, room: int | None = None) -> bool:
    """Give `bar` the roomiest style whose tabs fit in `room` px (default: its width); True
    when they fit (else the most compact style, and the bar scrolls)."""
    room = room if room is not None else bar.width()
    if room <= 0 or bar.count() == 0:
        return True
    for css in STYLES:
        if bar.styleSheet() != css:
            bar.setStyleSheet(css)
        if sum(bar.tabSizeHint(i).width() for i in range(bar.count())) <= room:
            return True
    return False
