"""Panels on tabs behind another do not paint a new result (issue 17: a cluster change painted
all ten analysis tabs); they paint it when their tab comes to front, or when read unshown
(Copy, report pictures) through Panel.ensure_painted."""
from __future__ import annotations

import threading

from explorer.widgets.base import copy_mime


def test_hidden_tabs_paint_when_shown_or_copied(loaded, qtbot, monkeypatch):
    window, _, _ = loaded
    s = window.session
    painted: dict[str, int] = {}
    for name in ("comparison", "heatmap", "versions"):
        cls = type(window.panels[name])
        orig = cls.paint

        def counting(self, value, _orig=orig, _name=name):
            painted[_name] = painted.get(_name, 0) + 1
            return _orig(self, value)
        monkeypatch.setattr(cls, "paint", counting)
    window.show_panel("comparison")
    other = next(c["name"] for c in s.data["clusters"] if c["name"] != s.cluster)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.set_cluster(other)
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    heat, ver = window.panels["heatmap"], window.panels["versions"]
    # the tab in front painted the new cohort; the two behind only kept it
    assert painted.get("comparison", 0) >= 1 and not window.panels["comparison"].stale
    assert "heatmap" not in painted and "versions" not in painted
    # the heatmap's tab was never shown: its analysis is deferred (Session.deferred), not run
    assert "heatmap" in s.deferred and s.data["heatmap"] is None
    assert heat.stale and heat.value is None
    # Copy reads a panel unshown: it paints first (once)
    copy_mime(ver)
    assert painted["versions"] == 1 and not ver.stale
    # bringing a tab to front paints its result, once
    window.show_panel("heatmap")
    qtbot.waitUntil(lambda: isinstance(s.data["heatmap"], dict) and not heat.stale, timeout=30000)
    assert painted["heatmap"] == 1 and heat.message() is None
    assert heat.shown() is s.data["heatmap"] or heat.shown() == s.data["heatmap"]


def test_hidden_timeline_and_whatif_graph_wait_until_shown(loaded, qtbot):
    """A drop's cohort opened its worst badcase in the Timeline and parsed the causal graph
    for the What-if (networkx, ~0.9 s on the UI thread) though both are tabs behind another
    (issue 17, drop to dashboard): each does it when its tab comes to front."""
    from explorer.core.timeline import worst_badcase
    window, _, _ = loaded
    s = window.session
    tl, wi = window.panels["timeline"], window.panels["whatif"]
    assert tl.visibleRegion().isEmpty() and wi.visibleRegion().isEmpty()  # tabs behind
    assert tl.current is None and tl.view_data is None  # nothing fetched nor painted
    assert tl.state.frame is s.data["frame"]  # compare mode has its cohort already
    assert not [i for i in wi.scene.items() if i.data(0)]  # no graph node drawn
    window.show_panel("timeline")
    qtbot.waitUntil(lambda: tl.current is not None, timeout=30000)
    assert tl.current == worst_badcase(s.data["frame"])
    window.show_panel("whatif")
    qtbot.waitUntil(lambda: bool([i for i in wi.scene.items() if i.data(0)]), timeout=30000)


def test_deferred_analyses_run_when_their_tab_is_first_shown_and_once(loaded, qtbot, monkeypatch):
    """The heatmap, SLA, engine and compare panels sit on tabs behind another and the conclusion does
    not read them: a drop does not compute them (issue 17, drop to dashboard); showing a tab
    computes its section once, the same as the whole pipeline's, and later cohorts compute it
    with the rest."""
    import explorer.session as session_mod
    from explorer.core import sections
    window, _, _ = loaded
    s = window.session
    assert s.deferred == {"heatmap", "sla", "engine", "compare"}
    assert all(s.data[k] is None for k in s.deferred)
    assert all(k not in s.objects for k in s.deferred)
    assert s.data["conclusion"] and s.data["versions"]  # what the conclusion reads did run
    calls = []
    orig = session_mod.analyse_section
    gate = threading.Event()  # holds the section's job until the panel's message is read

    def held(*a, **k):
        calls.append(a[4])
        assert gate.wait(30)
        return orig(*a, **k)
    monkeypatch.setattr(session_mod, "analyse_section", held)
    window.show_panel("sla")
    try:  # while it computes, the panel says so (not "Nothing loaded yet")
        qtbot.waitUntil(lambda: window.panels["sla"].message() == "Analysing…", timeout=10000)
    finally:
        gate.set()
    qtbot.waitUntil(lambda: s.data["sla"] is not None and s.runner.pending() == 0, timeout=30000)
    assert window.panels["sla"].message() is None  # the SLA itself, painted
    fresh = sections.run(s.store, s.cohort(), {}, keys=("sla",), cache={})["sla"].to_dict()
    assert s.data["sla"] == fresh and calls == ["sla"]
    window.show_panel("comparison")
    window.show_panel("sla")  # shown again: nothing recomputed
    copy_mime(window.panels["sla"])
    qtbot.wait(50)
    assert calls == ["sla"] and s.runner.pending() == 0
    assert s.data["heatmap"] is None  # still never shown
    # another cluster: the SLA (asked once) runs with the cohort's analyses, the heatmap not
    other = next(c["name"] for c in s.data["clusters"] if c["name"] != s.cluster)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.set_cluster(other)
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    assert calls == ["sla"] and isinstance(s.data["sla"], dict) and s.data["heatmap"] is None


def test_whatif_behind_another_tab_estimates_when_shown(loaded, qtbot, monkeypatch):
    """Once the What-if was shown (it holds the cohort), a selection made while it is a tab
    behind another does not start its estimate (Qt keeps such a tab 'visible': the DoWhy fit
    ran beside the cohort's analyses for a panel nobody saw); the estimate for that selection
    runs when the tab comes to front."""
    window, _, _ = loaded
    s, wi = window.session, window.panels["whatif"]
    window.show_panel("whatif")
    qtbot.waitUntil(lambda: wi.frame is not None and wi.result is not None
                    and s.compute.pending() == 0, timeout=120000)
    window.show_panel("comparison")
    qtbot.waitUntil(lambda: wi.visibleRegion().isEmpty(), timeout=10000)
    started: list[str] = []
    orig = type(s.compute).submit

    def counting(runner, key, *a, **k):
        started.append(key)
        return orig(runner, key, *a, **k)
    monkeypatch.setattr(type(s.compute), "submit", counting)
    picked = sorted(s.data["frame"]["case_id"])[:40]
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000):
        s.select_cases(picked)
    qtbot.wait(400)  # longer than the What-if's 250 ms debounce
    assert "whatif" not in started and wi.state.dirty
    assert wi.state.selected_ids == frozenset(picked)
    window.show_panel("whatif")
    qtbot.waitUntil(lambda: "whatif" in started, timeout=10000)
    qtbot.waitUntil(lambda: s.compute.pending() == 0, timeout=120000)
    # the estimate that ran is the one for the selection (40 cases, 20 of them or fewer bad)
    assert wi.state.applies_to()[0] == "selected"
