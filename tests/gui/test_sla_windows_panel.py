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
