"""Cluster list highlight, header texts, legend hygiene, heatmap selection outline and the
linked timeline (double-click a case -> Timeline panel)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from explorer.core.analysis.heatmap import cell_condition
from tests.gui.conftest import on_screen, painted
from explorer.widgets.clusters import ALL
from explorer.widgets.tablemodel import KEY_ROLE


def _current_key(panel):
    return panel.view.selectionModel().currentIndex().data(KEY_ROLE)


def _row_of(panel, key):
    proxy = panel.proxy
    return next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data(KEY_ROLE) == key)


def test_highlighted_cluster_row_is_the_cohort(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    panel = window.panels["clusters"]
    assert s.cluster is not None
    assert _current_key(panel) == s.cluster  # at start-up: the cohort's row, not "(all badcases)"
    # focus entering the list must not move the highlight to the first row
    panel.view.setFocus()
    qtbot.waitUntil(lambda: panel.view.hasFocus() or not window.isActiveWindow(), timeout=2000)
    assert _current_key(panel) == s.cluster
    # a click on "(all badcases)" takes effect on the first click
    rect = panel.view.visualRect(panel.proxy.index(_row_of(panel, ALL), 0))
    with qtbot.waitSignal(s.cohortChanged, timeout=5000):
        QTest.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert s.cluster is None and _current_key(panel) == ALL
    # the cohort set elsewhere (model -> UI) moves the highlight
    s.set_cluster("format error")
    assert _current_key(panel) == "format error"
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    # repainting the list (new clusters payload) keeps the cohort's row
    panel.show_result(s.data["clusters"])
    assert _current_key(panel) == "format error"


def test_header_control_reads_size_and_categories(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "cohort" in u.names()):
        s.set_cluster("format error")
    bad = cases[(~cases["correct"]) & (cases["cluster"] == "format error")]
    cats = sorted(set(bad["category"]))
    ctl = cases[cases["correct"] & cases["category"].isin(cats)]
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Control"] == f"{len(ctl):,} correct ({', '.join(cats)})"
    assert "[" not in header["Control"]
    from explorer.widgets.painters.header import header_html
    assert f"{len(ctl):,} correct ({', '.join(cats)})" in header_html(s.data["cohort"])


def test_distribution_legend_is_rebuilt_not_stacked(loaded, qtbot, qtlog):
    window, req, cases = loaded
    s = window.session
    window.docks["distributions"].raise_()
    panel = window.panels["distributions"]
    tree = s.data["tree"]
    node = next(n for n in tree["nodes"] if n["parent"] is not None)
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000, check_params_cb=lambda ids: ids is not None):
        s.select_tree_node(node["id"])
    for name in [n for n in ("单位换算", "format error", "计算错误") if n != s.cluster]:
        with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "frame" in u.names()):
            s.set_cluster(name)
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000, check_params_cb=lambda ids: ids is not None):
        s.select_tree_node(node["id"])
    panel.ecdf.setChecked(True)
    panel.hist.setChecked(True)
    texts = [label.text for _, label in panel.plot.legend.items]
    assert sum(t.startswith("Selected") for t in texts) == 1, texts
    assert sum(t.startswith("Badcase") for t in texts) == 1, texts
    assert not [r.message for r in qtlog.records if "already taken" in r.message]


def test_tree_node_labels_fit_their_boxes(app):
    from PySide6.QtWidgets import QGraphicsScene
    from explorer.widgets.painters.tree import paint_tree
    tree = {"max_depth": 2, "baseline_error_rate": 0.12, "nodes": [
        {"id": 0, "parent": None, "feature": "queue_ms", "threshold": 5671.25, "n": 300, "error_rate": 0.12},
        {"id": 1, "parent": 0, "side": "le", "feature": "batch_size", "threshold": 12.34, "n": 200,
         "error_rate": 0.05},
        {"id": 2, "parent": 0, "side": "gt", "is_leaf": True, "n": 100, "error_rate": 0.3},
        {"id": 3, "parent": 1, "side": "le", "is_leaf": True, "n": 150, "error_rate": 0.02},
        {"id": 4, "parent": 1, "side": "gt", "is_leaf": True, "n": 50, "error_rate": 0.1}]}
    scene = QGraphicsScene()
    items = paint_tree(scene, tree)
    texts = []
    for rect in items.values():
        box = rect.rect()
        for child in rect.childItems():
            r = child.mapRectToParent(child.boundingRect())
            assert box.contains(r), (child.text(), r, box)
            texts.append(child.text())
    assert not [t for t in texts if "…" in t], texts
    assert any("5,671 ms" in t for t in texts) and any("12.3 requests" in t for t in texts)


def _heatmap_on_request_level(window, qtbot):
    s = window.session
    on_screen(window, qtbot, "heatmap")  # its analysis waits for its tab (Session.deferred)
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "heatmap" in u.names()):
        s.set_params("heatmap", level="request", x_metric="tpot_ms", y_metric="queue_ms",
                     value_metric="e2e_ms")
    return s.data["heatmap"]


def test_heatmap_cell_outlined_and_its_requests_listed(loaded, qtbot):
    import numpy as np
    window, req, cases = loaded
    s = window.session
    hm = _heatmap_on_request_level(window, qtbot)
    counts = np.array(hm["counts"])
    window.docks["heatmap"].raise_()
    panel = window.panels["heatmap"]
    qtbot.waitUntil(lambda: window.panels["timeline"].visibleRegion().isEmpty(), timeout=5000)
    # a cell whose requests include none of the cohort's cases, and one with cases
    cohort_req = set(s.data["frame"]["request_id"].dropna())
    xe, ye = np.array(hm["x_edges"]), np.array(hm["y_edges"])
    def members(ix, iy):
        lx, ly = ix == len(xe) - 2, iy == len(ye) - 2
        inx = (req["tpot_ms"] >= xe[ix]) & ((req["tpot_ms"] <= xe[ix + 1]) if lx else (req["tpot_ms"] < xe[ix + 1]))
        iny = (req["queue_ms"] >= ye[iy]) & ((req["queue_ms"] <= ye[iy + 1]) if ly else (req["queue_ms"] < ye[iy + 1]))
        return req[inx & iny]
    cells = [(ix, iy) for iy, ix in zip(*np.nonzero(counts))]
    empty = next(c for c in cells if not set(members(*c)["request_id"]) & cohort_req)
    full = max(cells, key=lambda c: counts[c[1], c[0]])
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000, check_params_cb=lambda ids: ids is not None):
        s.select_heatmap_cell(*empty)
    n = len(members(*empty))
    assert s.selected_requests == n and len(s.selected_cases) == 0
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Selected"] == (f"{n} request{'s' if n != 1 else ''}, none bound to a case of this "
                                  f"cohort · Heatmap: {cell_condition(s.objects['heatmap'], *empty)}")
    msg = window.panels["cases"].message()
    assert msg and "none is bound to a case of this cohort" in msg
    assert panel.req_box.isVisibleTo(panel) and panel.req_model.rowCount() == n
    assert sorted(k[1] for k in panel.req_model.keys) == sorted(members(*empty)["request_id"])
    r = panel.outline.rect()
    ix, iy = empty
    assert panel.outline.isVisible()
    assert (r.left(), r.top(), r.right(), r.bottom()) == (xe[ix], ye[iy], xe[ix + 1], ye[iy + 1])
    # double-click a listed request: it opens in the Timeline, whose dock comes to the front
    idx = panel.req_view.model().index(0, 1)
    want = idx.siblingAtColumn(0).data(KEY_ROLE)
    with qtbot.waitSignal(s.requestActivated, timeout=5000) as blocker:
        panel.req_view.doubleClicked.emit(idx)
    assert tuple(blocker.args) == want
    qtbot.waitUntil(lambda: not window.panels["timeline"].visibleRegion().isEmpty(), timeout=5000)
    # a cell with cohort cases: the case table lists them, the outline moves
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000, check_params_cb=lambda ids: ids is not None):
        s.select_heatmap_cell(*full)
    assert s.selected_requests == counts[full[1], full[0]] and panel.outline.rect().left() == xe[full[0]]
    # Esc clears: outline and list go
    QTest.keyClick(window, Qt.Key.Key_Escape)
    assert not panel.outline.isVisible() and not panel.req_box.isVisibleTo(panel)


def test_double_click_a_case_opens_its_request_in_the_timeline(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    panel = window.panels["cases"]
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0, timeout=30000)
    idx = panel.model.index(3, 0)
    row = panel.model.df.iloc[3]
    assert row["request_id"] == cases.set_index("case_id").loc[row["case_id"], "request_id"]
    timeline = window.panels["timeline"]
    window.docks["comparison"].raise_()
    qtbot.waitUntil(lambda: timeline.visibleRegion().isEmpty(), timeout=5000)  # a tab behind
    with qtbot.waitSignal(s.requestActivated, timeout=5000) as blocker:
        rect = panel.view.visualRect(idx)
        vp = panel.view.viewport()
        QTest.mouseClick(vp, Qt.MouseButton.LeftButton, pos=rect.center())  # views need the press
        QTest.mouseDClick(vp, Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [row["run_id"], row["request_id"]]
    qtbot.waitUntil(lambda: not timeline.visibleRegion().isEmpty()  # its tab came to the front
                    and timeline.current == (row["run_id"], row["request_id"]), timeout=30000)
    # a case without a bound request says so instead of opening nothing
    with qtbot.waitSignal(s.message, timeout=5000) as blocker:
        s.open_request(None, None)
    assert "not bound" in blocker.args[0]


def test_distribution_double_click_picks_the_nearest_badcase(loaded, qtbot):
    import numpy as np
    window, req, cases = loaded
    s = window.session
    panel = painted(window)["distributions"]  # a tab behind the comparison: read unshown
    frame = s.data["frame"]
    m = panel.metric_box.currentData()
    bad = frame[(frame["grp"] == "bad") & frame["request_id"].notna()]
    vals = bad[m].astype(float).to_numpy()
    x = float(np.nanmedian(vals)) + 0.001
    i = int(np.nanargmin(np.abs(vals - x)))
    assert panel.nearest_case(x) == (bad["run_id"].iloc[i], bad["request_id"].iloc[i])


def test_versions_chart_labels_are_unique(app):
    import pyqtgraph as pg
    from explorer.widgets.painters.versions import chart_rows, paint_versions
    ch = [{"benchmark": f"ps_experiment_v0.3.0_20250519/rate_{r}", "metric": "ttft_ms", "from_version": "0.2.1",
           "to_version": "0.3.0", "change_pct": pct, "p_value": 0.01, "p_adjusted": 0.02,
           "regression": pct > 10} for r, pct in ((1, 12.0), (2, -4.0), (3, 30.0))]
    summary = [{"metric": "ttft_ms", "from_version": "0.2.1", "to_version": "0.3.0", "benchmarks": 3,
                "significant": 3, "regressions": 2, "median_change_pct": 12.0, "min_change_pct": -4.0,
                "max_change_pct": 30.0, "min_p_adjusted": 0.02}]
    bars, title = chart_rows({"changes": ch, "summary": summary})
    assert len(bars) == 1 and bars[0]["value"] == 12.0 and (bars[0]["lo"], bars[0]["hi"]) == (-4.0, 30.0)
    assert "3 benchmarks" in bars[0]["label"] and "median" in title
    bars, _ = chart_rows({"changes": ch})  # no summary: one bar per change, benchmark named
    labels = [b["label"] for b in bars]
    assert len(set(labels)) == 3 and all("rate_" in lab for lab in labels)
    plot = pg.PlotItem()
    assert paint_versions(plot, {"changes": ch, "summary": summary}) is None


def test_cluster_names_with_a_long_common_prefix_show_what_differs(window):
    panel = window.panels["clusters"]
    panel.show_result([{"name": "ori_mmlu-high_school_mathematics", "badcases": 115, "share": 0.68, "bound": 0},
                       {"name": "ori_mmlu-college_mathematics", "badcases": 55, "share": 0.32, "bound": 0}])
    shown = sorted(r[0] for r in panel.model.rows[1:])
    assert shown == ["…college_mathematics", "…high_school_mathematics"]
    assert sorted(panel.model.keys[1:]) == ["ori_mmlu-college_mathematics", "ori_mmlu-high_school_mathematics"]


def test_heatmap_pickers_show_the_asked_metrics_when_there_is_no_data(window):
    from explorer.core.analysis.heatmap import DEFAULTS
    panel = window.panels["heatmap"]
    panel.show_result({"status": "no_data", "reason": "the traces do not record batch_size"})
    assert {n: b.currentData() for n, b in panel.boxes.items()} == \
        {n: DEFAULTS[n] for n in ("x_metric", "y_metric", "value_metric")}
    panel.ensure_painted()  # a tab behind the comparison: painted when read
    assert "Choose metrics" in panel.message()
