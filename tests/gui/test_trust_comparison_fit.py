"""Issue 33, item 3 (what the first round left): the metric comparison's every column is in
view at 1,366 x 768 without scrolling sideways (short headers, the full text on hover)."""
from __future__ import annotations

from tests.gui.conftest import on_screen


def test_the_comparison_needs_no_sideways_scroll_on_a_laptop(window, qtbot):
    from PySide6.QtCore import Qt
    s = window.session
    window.resize(1366, 768)
    s.load_demo()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.data.get("comparison") is not None,
                    timeout=240000)
    panel = on_screen(window, qtbot, "comparison")
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0, timeout=30000)
    qtbot.wait(100)
    view = panel.view
    hh = view.horizontalHeader()
    need = sum(hh.sectionSize(i) for i in range(hh.count()) if not hh.isSectionHidden(i))
    assert view.horizontalScrollBar().maximum() == 0, (need, view.viewport().width())
    assert need <= view.viewport().width(), (need, view.viewport().width())
    model = view.model()
    for c in range(model.columnCount()):
        head = model.headerData(c, Qt.Orientation.Horizontal)
        tip = model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert head in tip, (c, head, tip)              # the whole title on hover
        if c != 0 and not hh.isSectionHidden(c):         # numbers are never elided
            assert hh.sectionSize(c) >= view.sizeHintForColumn(c), c
    assert [c for c in range(hh.count()) if hh.isSectionHidden(c)] in ([], [7])
    for r in range(model.rowCount()):   # the name and the rank interval: whole on hover
        tip = model.index(r, 0).data(Qt.ItemDataRole.ToolTipRole)
        assert model.index(r, 0).data() in tip and model.index(r, 7).data() in tip, (r, tip)
    # the metric's name is not elided to nothing: it keeps at least 12 characters' room
    fm = view.fontMetrics()
    assert hh.sectionSize(0) >= fm.horizontalAdvance("★ preemption"), hh.sectionSize(0)


def test_fit_widths_shrinks_the_widest_first_never_below_a_floor():
    from explorer.widgets.colfit import fit_widths
    want, floors = [186, 111, 111, 72, 162], [72, 111, 111, 72, 72]
    w = fit_widths(want, floors, 560)
    assert sum(w) <= 560 and w[1:4] == [111, 111, 72]          # the number columns whole
    assert w[0] == w[4] and w[0] < 162                         # the two widest capped alike
    assert fit_widths(want, floors, 1000) == want               # room enough: as asked
    assert fit_widths(want, floors, 100) == [72, 111, 111, 72, 72]   # floors: the view scrolls
