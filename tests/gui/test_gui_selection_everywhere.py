"""A selection reaches every view, both ways: a click in one view (tree node, heatmap cell,
brushed range, picked cases) makes the selection (UI -> model), and every other view answers
for it (model -> UI): header, comparison (against the rest and against the control), heatmap
cells it occupies, versions, SLA and conclusion; clearing it brings every view back."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.gui.conftest import on_screen, painted


def _wait_selection(s, qtbot, act):
    with qtbot.waitSignal(s.resultsChanged, timeout=60000,
                          check_params_cb=lambda u: isinstance(u.names().get("selection"), dict)):
        act()
    return s.data["selection"]


def _assert_every_view_follows(window, sel, name):
    s = window.session
    p = painted(window)  # views on tabs behind others are read without being shown
    frame = s.data["frame"]
    picked = frame["case_id"].isin(s.selected_cases)
    assert sel["n"] == int(picked.sum()) > 0
    # header: what is selected and by which view
    header = dict((t, v) for t, v, _ in p["header"].items)
    assert header["Selected"].endswith(name) and f"{sel['n']:,} case" in header["Selected"]
    # comparison: the selection against the rest of the cohort, numbers recomputed here
    comp = p["comparison"]
    assert comp.view_key() == "vs_rest" and comp.model.headers[1:3] == ["Selected", "Rest"]
    kv = frame["kv_cache_hit_rate"]
    row = {r["metric"]: r for r in comp.shown}["kv_cache_hit_rate"]
    assert row["bad_mean"] == pytest.approx(kv[picked].mean())
    assert row["control_mean"] == pytest.approx(kv[~picked].mean())
    assert name in comp.note.text()
    # ... and the selected badcases against the control
    comp.what.setCurrentIndex(comp.what.findData("vs_control"))
    comp.ensure_painted()
    bad = frame["badcase"] == 1
    if (picked & bad).any():
        row = {r["metric"]: r for r in comp.shown}["kv_cache_hit_rate"]
        assert row["bad_mean"] == pytest.approx(kv[picked & bad].mean())
        assert row["control_mean"] == pytest.approx(kv[~bad].mean())
        assert comp.model.headers[1:3] == ["Selected", "Control"]
    # heatmap: one dashed outline and one count per occupied cell
    hm = p["heatmap"]
    cells = hm.selected_cells()
    assert cells and len(hm.occupied) == 2 * len(cells)
    assert sum(c[2] for c in cells) <= sel["n"]
    # versions and SLA: the selection's own figures beside the cohort's
    by = frame[picked].groupby("engine_version").size()
    vt = p["versions"].selection_text()
    assert name in vt and all(f"{v}: {n:,} case" in vt for v, n in by.items())
    assert p["versions"].sel_label.isVisibleTo(p["versions"])
    st = p["sla"].selection_text()
    met = frame[picked]
    share = ((met["ttft_ms"] <= 500) & (met["tpot_ms"] <= 50)).mean()
    assert name in st and f"{100 * share:.0f}%" in st
    # conclusion: the selection's reading first, then the whole cohort's
    html = p["conclusion"].text.toPlainText()
    assert f"For {name}" in html and "For the whole cohort" in html


def _assert_every_view_cleared(window):
    p = painted(window)
    assert window.session.data["selection"] is None
    assert "Selected" not in dict((t, v) for t, v, _ in p["header"].items)
    assert p["comparison"].view_key() == "cohort" and p["comparison"].model.headers[1] == "Badcase"
    assert p["comparison"].shown == window.session.data["comparison"]
    assert not p["heatmap"].occupied and not p["heatmap"].selected_cells()
    assert not p["sla"].sel_label.isVisibleTo(p["sla"]) and not p["versions"].selection_text()
    assert "For the whole cohort" not in p["conclusion"].text.toPlainText()


def test_tree_node_reaches_every_view_and_esc_clears_them(loaded, qtbot):
    window, _, _ = loaded
    s = window.session
    tree = s.data["tree"]
    node = max((n for n in tree["nodes"] if n["parent"] is not None), key=lambda n: n["error_rate"] or 0)
    window.docks["tree"].raise_()
    sel = _wait_selection(s, qtbot, lambda: window.panels["tree"].click_node(node["id"]))
    assert s.selection_source == ("tree", node["id"]) and sel["n"] == node["n"]
    from explorer.core.analysis.tree import node_condition
    name = f"Decision tree: {node_condition(s.objects['tree'], node['id'])}"  # by its condition
    assert "node" not in name
    _assert_every_view_follows(window, sel, name)
    with qtbot.waitSignal(s.resultsChanged, timeout=30000, check_params_cb=lambda u: "selection" in u.names()):
        QTest.keyClick(window, Qt.Key.Key_Escape)
    _assert_every_view_cleared(window)


def test_heatmap_cell_reaches_every_view(loaded, qtbot):
    window, _, _ = loaded
    s = window.session
    on_screen(window, qtbot, "heatmap")  # its analysis waits for its tab (Session.deferred)
    hm = s.data["heatmap"]
    cc = {(c[0], c[1]): c[2] for c in hm["case_cells"]}
    cell = max(cc, key=cc.get)  # the cell holding the most cohort cases
    window.docks["heatmap"].raise_()
    sel = _wait_selection(s, qtbot, lambda: s.select_heatmap_cell(*cell))
    from explorer.core.analysis.heatmap import cell_condition
    _assert_every_view_follows(window, sel, f"Heatmap: {cell_condition(s.objects['heatmap'], *cell)}")
    # the selected cell is among those the selection occupies, with every case of it
    occupied = {(c[0], c[1]): c[2] for c in window.panels["heatmap"].selected_cells()}
    assert occupied.get(cell) == cc[cell]


def test_picked_cases_and_a_brushed_range_are_selections_too(loaded, qtbot):
    window, _, _ = loaded
    s = window.session
    cases = window.panels["cases"]
    # pick five rows of the Cases table (UI -> model)
    cases.view.selectRow(0)
    for r in range(1, 5):
        cases.view.selectionModel().select(cases.model.index(r, 0),
                                           cases.view.selectionModel().SelectionFlag.Select
                                           | cases.view.selectionModel().SelectionFlag.Rows)
    ids = cases.picked_ids()
    assert len(ids) == 5 and cases.pick.isEnabled()
    sel = _wait_selection(s, qtbot, lambda: QTest.mouseClick(cases.pick, Qt.MouseButton.LeftButton))
    assert s.selected_cases == frozenset(ids) and sel["n"] == 5
    _assert_every_view_follows(window, sel, "Cases: 5 cases picked")
    # brush a TPOT range on the Distributions panel
    dist = window.panels["distributions"]
    window.docks["distributions"].raise_()
    dist.metric_box.setCurrentIndex(dist.metric_box.findData("tpot_ms"))
    frame = s.data["frame"]
    lo, hi = np.nanpercentile(frame["tpot_ms"], [50, 90])
    dist.brush.setChecked(True)
    sel = _wait_selection(s, qtbot, lambda: dist.set_brush(lo, hi))
    want = frame[(frame["tpot_ms"] >= lo) & (frame["tpot_ms"] < hi)]
    assert s.selection_source[0] == "range" and s.selected_cases == frozenset(want["case_id"])
    _assert_every_view_follows(window, sel, s.selection_label)
    assert s.selection_label.startswith("Distributions: TPOT")
    # unticking the brush clears the selection it made
    with qtbot.waitSignal(s.resultsChanged, timeout=30000, check_params_cb=lambda u: "selection" in u.names()):
        dist.brush.setChecked(False)
    _assert_every_view_cleared(window)


def test_a_selection_is_answered_again_when_the_analyses_rerun(loaded, qtbot):
    """New heatmap axes under a tree-node selection: the outlined cells are those of the new
    heatmap, not of the one before."""
    window, _, _ = loaded
    s = window.session
    on_screen(window, qtbot, "heatmap")  # its analysis waits for its tab (Session.deferred)
    node = next(n for n in s.data["tree"]["nodes"] if n["parent"] is not None)
    _wait_selection(s, qtbot, lambda: s.select_tree_node(node["id"]))
    with qtbot.waitSignal(s.resultsChanged, timeout=60000,
                          check_params_cb=lambda u: isinstance(u.names().get("selection"), dict)):
        s.set_params("heatmap", level="request", x_metric="tpot_ms", y_metric="queue_ms",
                     value_metric="e2e_ms")
    hm = s.data["heatmap"]
    assert hm["level"] == "request" and s.selection_source == ("tree", node["id"])
    frame = s.data["frame"]
    picked = frame[frame["case_id"].isin(s.selected_cases)]
    xe, ye = hm["x_edges"], hm["y_edges"]
    cells = painted(window)["heatmap"].selected_cells()
    assert sum(c[2] for c in cells) == int((picked["tpot_ms"].notna() & picked["queue_ms"].notna()).sum())
    for ix, iy, n, _ in cells:
        inside = picked[(picked["tpot_ms"] >= xe[ix]) & (picked["tpot_ms"] <= xe[ix + 1])
                        & (picked["queue_ms"] >= ye[iy]) & (picked["queue_ms"] <= ye[iy + 1])]
        assert len(inside) >= n
