"""The Engine tab on the published logs alone: a counter track per statistic, one line per
engine of each log (colour = the log, line style = its data-parallel engine), and the
server-wide peak of the two engines in the summary (vllm PR #30738: 106 + 106 running)."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import pytest

PUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "published"
pytestmark = pytest.mark.skipif(not PUB.is_dir(), reason=f"published artefacts missing: {PUB}")


def test_engine_tracks_per_engine_from_logs_alone(window, qtbot):
    window.session.load_paths([str(PUB / "vllm-30738-v1-dp2-two-engines-mfu.txt"),
                               str(PUB / "vllm-43295-v1-engine-log.txt")])
    panel = window.panels["engine"]
    qtbot.waitUntil(lambda: "server peak" in panel.summary.text(), timeout=60000)
    assert "server peak 212 running over 2 engines" in panel.summary.text()
    plots = [panel.tracks.getItem(r, 0) for r in range(4)]
    assert [p.getAxis("left").labelText for p in plots] == ["running", "waiting", "KV usage (%)",
                                                            "prefix hit (%)"]
    curves = [c for c in plots[0].listDataItems() if isinstance(c, pg.PlotDataItem)]
    by_name = {c.name(): c for c in curves}
    dp0 = by_name["vllm-30738-v1-dp2-two-engines-mfu · engine 0"]
    dp1 = by_name["vllm-30738-v1-dp2-two-engines-mfu · engine 1"]
    mtp = by_name["vllm-43295-v1-engine-log · engine 0"]
    assert list(dp1.getData()[1]) == [1, 106] and list(mtp.getData()[1]) == [18, 18, 18, 21, 20]
    pen0, pen1, pen2 = (c.opts["pen"] for c in (dp0, dp1, mtp))
    assert pen0.color() == pen1.color() != pen2.color()
    assert pen0.style() != pen1.style()
