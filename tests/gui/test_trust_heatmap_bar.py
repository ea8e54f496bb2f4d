"""Issue 33 (smaller item): after a heatmap selection the colour bar's title was drawn twice:
the bar, reused on a repaint, got its title on its value axis while pyqtgraph's ColorBarItem
keeps it on its left axis. The heatmap's colour bar shows one title, the colour's metric, after
a cell is selected and the heatmap repainted (the colour switched to the badcase share and back)."""
from __future__ import annotations

from tests.gui.conftest import on_screen
from tests.gui.test_trust_numbers import _wait_selection


def _titles(panel) -> list[str]:
    """The visible axis titles of the heatmap's colour bars."""
    import pyqtgraph as pg
    scene = panel.plot.scene()
    bars = [i for i in scene.items() if isinstance(i, pg.ColorBarItem) and i.isVisible()]
    assert len(bars) == 1
    return [ax.label.toPlainText().strip() for ax in (bars[0].getAxis(k) for k in
            ("left", "right", "top", "bottom")) if ax.isVisible() and ax.label.isVisible()
            and ax.label.toPlainText().strip()]


def test_the_colour_bar_title_is_drawn_once_after_a_selection(loaded, qtbot):
    from explorer.core.names import label
    window, _req, _cases = loaded
    s = window.session
    panel = on_screen(window, qtbot, "heatmap")
    vm = label(s.data["heatmap"]["value_metric"])
    assert _titles(panel) == [vm]
    cc = {(c[0], c[1]): c[2] for c in s.data["heatmap"]["case_cells"]}
    _wait_selection(s, qtbot, lambda: s.select_heatmap_cell(*max(cc, key=cc.get)))
    qtbot.waitUntil(lambda: not panel.stale, timeout=30000)
    for i in (panel.colour.findData("share"), panel.colour.findData("mean")):
        panel.colour.setCurrentIndex(i)
        qtbot.waitUntil(lambda: not panel.stale and s.runner.pending() == 0, timeout=30000)
        qtbot.wait(50)
        titles = _titles(panel)
        assert len(titles) == 1, titles
    assert titles == [vm]
