"""Heatmap coloured by the badcase share of each cell (counts on hover), and SLA thresholds
edited in the window, both ways."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gui.conftest import on_screen


def test_heatmap_colours_by_badcase_share_and_says_the_counts(loaded, qtbot):
    window, _, _ = loaded
    s = window.session
    panel = on_screen(window, qtbot, "heatmap")
    hm = s.data["heatmap"]
    frame = s.data["frame"]
    # the cohort's cases per cell, recomputed from the frame: 10 s windows of each run
    key = {(run, int(w)): (ix, iy) for (ix, iy), wins in _cell_windows(s).items() for run, w in wins}
    per = {}
    for run, a, bad in zip(frame["run_id"], frame["arrival_s"], frame["badcase"]):
        cell = key.get((run, int(a // hm["window_s"]))) if isinstance(run, str) and np.isfinite(a) else None
        if cell is not None:
            n, nb = per.get(cell, (0, 0))
            per[cell] = (n + 1, nb + int(bad))
    assert {(c[0], c[1]): (c[2], c[3]) for c in hm["case_cells"]} == per
    # UI -> model: colour by badcase share
    panel.colour.setCurrentIndex(panel.colour.findData("share"))
    shown = panel.shown()
    assert shown["colour"] == "share" and not panel.boxes["value_metric"].isEnabled()
    for (ix, iy), (n, nb) in per.items():
        assert shown["values"][iy][ix] == pytest.approx(nb / n)
    empty = [(ix, iy) for iy, row in enumerate(shown["values"]) for ix, v in enumerate(row)
             if v is None]
    assert all(c not in per for c in empty)
    assert panel.plot.titleLabel.text == "badcase share of the cohort's cases per cell"
    # counts on hover: windows, cohort cases and badcases of the cell
    from explorer.widgets.painters.heatmap import cell_text
    (ix, iy), (n, nb) = max(per.items(), key=lambda kv: kv[1][0])
    text = cell_text(shown, ix, iy)
    assert f"cohort cases: {n:,} ({nb:,} badcase" in text and "time windows: " in text
    # and back to the mean value metric
    panel.colour.setCurrentIndex(panel.colour.findData("mean"))
    assert panel.shown() is hm or panel.shown() == hm
    assert panel.boxes["value_metric"].isEnabled()


def _cell_windows(s):
    hm = s.objects["heatmap"]
    return hm.cell_windows


def test_sla_thresholds_are_edited_in_the_window(loaded, qtbot):
    window, req, _ = loaded
    s = window.session
    panel = on_screen(window, qtbot, "sla")
    assert panel.thresholds["ttft_ms"].value() == 500 and panel.thresholds["tpot_ms"].value() == 50
    # UI -> model: a tighter TTFT bound recomputes the attainment
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "sla" in u.names()):
        panel.thresholds["ttft_ms"].setValue(200)
    sla = s.data["sla"]
    assert sla["thresholds"] == {"ttft_ms": 200.0, "tpot_ms": 50.0}
    met = ((req["ttft_ms"] <= 200) & (req["tpot_ms"] <= 50)).mean()
    assert sla["attainment"]["share"] == pytest.approx(met)
    assert "TTFT ≤ 200 ms" in panel.summary.text()
    # model -> UI: thresholds set elsewhere show in the boxes
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "sla" in u.names()):
        s.set_params("sla", thresholds={"ttft_ms": 800.0, "tpot_ms": 30.0})
    assert panel.thresholds["ttft_ms"].value() == 800 and panel.thresholds["tpot_ms"].value() == 30
