"""Large inputs keep the window responsive (issue #15): 100,000 badcase clusters are listed
without freezing the UI thread (the cluster list formats only the rows on screen and sorts
once, in the model, not through a proxy asking Python for two values per comparison)."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer

pytestmark = pytest.mark.timeout(300)
N_CLUSTERS = 100_000


class StallMeter:
    """The longest time the UI thread did not run its event loop (a 10 ms timer's gaps)."""

    def __init__(self):
        self.last = time.perf_counter()
        self.worst = 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now


def test_100000_clusters_do_not_freeze_the_window(window, session, qtbot, tmp_path):
    ev = tmp_path / "many_clusters_eval.csv"
    with ev.open("w") as f:
        f.write("case_id,correct,category,cluster,prompt\n")
        for i in range(N_CLUSTERS):
            f.write(f"c{i},false,maths,<b>cluster {i:06d}</b>,q{i}\n")
        f.write("ok1,true,maths,,fine\n")
    meter = StallMeter()
    window.load([str(ev)])
    qtbot.waitUntil(lambda: len(session.data.get("clusters") or []) == N_CLUSTERS
                    and session.runner.pending() == 0, timeout=240000)
    qtbot.wait(200)
    meter.timer.stop()
    panel = window.panels["clusters"]
    assert panel.model.rowCount() == N_CLUSTERS + 1
    # every cluster has one badcase: the sort by badcases keeps them all; the chosen one is
    # highlighted; a name that starts with a tag is shown literally in its tooltip
    from PySide6.QtCore import Qt
    idx = panel.model.index(1, 0)
    assert idx.data().startswith("<b>cluster ") or idx.data().startswith("…")
    tip = idx.data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("<qt>&lt;b&gt;cluster ")
    assert panel.view.currentIndex().row() >= 0
    # sorting by name: one sort in the model
    t0 = time.perf_counter()
    panel.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    took_sort = time.perf_counter() - t0
    names = [panel.model.index(r, 0).data(Qt.ItemDataRole.UserRole) for r in range(1, 6)]
    assert names == sorted(names) and names[0] == "<b>cluster 000000</b>"
    print(f"worst UI stall {meter.worst:.2f} s, sort by name {took_sort:.2f} s")
    # only rows that were shown are formatted; the stall bound is loose for a shared machine
    # (46 s when the payload signal was Signal(dict), copied per receiver; 18 s in issue #15)
    assert len(panel.model._shown) < 2000, len(panel.model._shown)
    assert meter.worst < 10.0, meter.worst
    assert took_sort < 5.0, took_sort
