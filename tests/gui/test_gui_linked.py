"""Cluster list highlight, header texts, legend hygiene, heatmap selection outline and the
linked timeline (double-click a case -> Timeline panel)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from widgets.clusters import ALL
from widgets.tablemodel import KEY_ROLE


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
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "cohort" in u):
        s.set_cluster("format error")
    bad = cases[(~cases["correct"]) & (cases["cluster"] == "format error")]
    cats = sorted(set(bad["category"]))
    ctl = cases[cases["correct"] & cases["category"].isin(cats)]
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Control"] == f"{len(ctl):,} correct ({', '.join(cats)})"
    assert "[" not in header["Control"]
    from widgets.painters.header import header_html
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
        with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "frame" in u):
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
    from widgets.painters.tree import paint_tree
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
