"""Issue 33, item 3: the window never grows wider than the screen, whatever the names and the
selection: a 200-character cluster name and a selection (named by its condition) are elided in
the header, whole on hover; the window's minimum width stays under a 1,366 px laptop screen."""
from __future__ import annotations

from tests.gui.conftest import painted, synthetic_store

LONG = "lm-eval-harness_" + "mmlu_pro_" * 19 + "samples.jsonl"   # 200 characters


def test_a_long_cluster_name_and_a_selection_fit_a_laptop_screen(window, qtbot):
    assert len(LONG) >= 200
    store, _req, _cases = synthetic_store()
    store.con.execute("UPDATE cases SET cluster = ? WHERE cluster = 'format error'", [LONG])
    s = window.session
    s.store.close()
    s.store = store
    window.resize(1366, 768)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.rescan()
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.set_cluster(LONG)
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.cluster == LONG, timeout=60000)
    tree = s.data["tree"]
    node = max((n for n in tree["nodes"] if n["parent"] is not None), key=lambda n: n["depth"])
    with qtbot.waitSignal(s.resultsChanged, timeout=60000,
                          check_params_cb=lambda u: isinstance(u.names().get("selection"), dict)):
        s.select_tree_node(node["id"])
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    painted(window)
    qtbot.wait(50)
    assert window.minimumSizeHint().width() <= 1366
    assert window.width() <= 1366
    header = window.panels["header"]
    values = {t: v for t, v, _ in header.items}
    assert values["Cluster"] == LONG and "Decision tree: " in values["Selected"]
    from explorer.widgets.elide import ElidedLabel
    labels = [w for w in header.findChildren(ElidedLabel) if w.full_text() == LONG]
    assert labels and labels[0].is_elided() and "…" in labels[0].shown_text()
    assert LONG in labels[0].toolTip()             # the whole name on hover
    assert header.width() <= 1366


def test_every_tab_in_view_on_a_laptop_screen(window, qtbot):
    """At 1,366 x 768 every dock tab is in view (no tab behind the scroll arrows)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar
    window.resize(1366, 768)
    qtbot.wait(100)
    window.tidy_tab_bars()
    bars = [b for b in window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if b.isVisible() and b.count() > 1]
    assert bars
    for bar in bars:
        need = sum(bar.tabSizeHint(i).width() for i in range(bar.count()))
        assert need <= bar.width() + 1, [bar.tabText(i) for i in range(bar.count())]
        assert all(bar.tabRect(i).right() <= bar.width() for i in range(bar.count()))


def test_the_riskiest_branch_is_in_view_on_a_laptop(window, qtbot):
    """The demo's tree is wider than the Decision tree tab at 1,366 px: it opens on the
    riskiest branch (root to riskiest leaf in view), not on its left edge."""
    s = window.session
    window.resize(1366, 768)
    s.load_demo()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.data.get("tree") is not None,
                    timeout=240000)
    window.show_panel("tree")
    panel = window.panels["tree"]
    qtbot.waitUntil(lambda: not panel.stale and bool(panel.items), timeout=30000)
    qtbot.wait(50)
    panel.view.fit()
    shown = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
    path = s.data["tree"]["riskiest_path"]
    whole = panel.scene.itemsBoundingRect()
    assert whole.width() > shown.width()          # the tree does not fit: the case at hand
    for n in (path[0], path[-1]):
        r = panel.items[n].sceneBoundingRect()
        assert shown.left() - 1 <= r.left() and r.right() <= shown.right() + 1, (n, r, shown)
