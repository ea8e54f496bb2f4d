"""A trace-only session (no eval) opens on the SLA panel; its violation periods are shaded and
a click on one selects that period's requests in every view."""
from __future__ import annotations

import numpy as np


def test_trace_only_opens_on_sla_and_period_selects_requests(window, qtbot):
    from explorer.core.store import Store
    from explorer.demo import sla_collapse as sc
    s = window.session
    s.store.close()
    s.store = Store()
    sc.load(s.store, 0, True)
    with qtbot.waitSignal(s.runner.idle, timeout=120000):
        s.rescan()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and isinstance(s.data.get("sla_diagnosis"), dict),
                    timeout=120000)
    panel = window.panels["sla"]
    qtbot.waitUntil(lambda: bool(panel.regions), timeout=60000)
    assert window.docks["sla"].isVisible() and not window.docks["sla"].visibleRegion().isEmpty()
    periods = [p for p in s.data["sla_diagnosis"]["diagnosis"]["violations"] if not p["isolated"]]
    assert [p for _r, p in panel.regions] == periods
    lo, hi = panel.regions[0][0].getRegion()
    t0 = min(w["start_s"] for w in s.data["sla_diagnosis"]["windows"])
    assert (lo, hi) == ((periods[0]["start_s"] - t0) / 60, (periods[0]["end_s"] - t0) / 60)
    panel.select_period(periods[0])
    qtbot.waitUntil(lambda: s.selected_requests is not None, timeout=60000)
    req, _st = sc.synthesize(0, True)
    want = ((req["arrival_s"] >= periods[0]["start_s"]) & (req["arrival_s"] < periods[0]["end_s"])).sum()
    assert s.selected_requests == want == periods[0]["n"]
    assert np.isfinite(want)
    # the heatmap follows: restricted to the period (its windows recomputed by hand in
    # tests/test_heatmap_periods.py), and lifted when the selection is cleared
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and isinstance(s.data.get("heatmap"), dict)
                    and bool(s.data["heatmap"].get("periods")), timeout=120000)
    hm = s.data["heatmap"]
    assert hm["periods"] == [{"run_id": "sla-demo", "start_s": periods[0]["start_s"],
                              "end_s": periods[0]["end_s"]}]
    a = req["arrival_s"][(req["arrival_s"] >= periods[0]["start_s"]) & (req["arrival_s"] < periods[0]["end_s"])]
    assert hm["n_items"] == np.floor(a / 10.0).nunique()
    window.panels["heatmap"].ensure_painted()  # an off-screen dock paints when shown
    assert "restricted to 1 violation period" in window.panels["heatmap"].hint.text()
    s.clear_selection()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and isinstance(s.data.get("heatmap"), dict)
                    and not s.data["heatmap"].get("periods"), timeout=120000)
    assert s.data["heatmap"]["n_items"] == np.floor(req["arrival_s"] / 10.0).nunique()
