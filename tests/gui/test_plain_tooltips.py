"""Names from input files show as their own characters in tooltips: Qt renders a tooltip as
rich text when it merely looks like markup (Qt::mightBeRichText), so a cluster named
"<b>x</b>" showed as a bold "x" and "<img src=...>" loaded an image."""
from __future__ import annotations

from PySide6 import QtGui
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

NAME = "<b>bold</b> & <img src='x'> [y](javascript:z)"


def shown(tip: str) -> str:
    """The text QToolTip shows for `tip` (its rich-text guess, then the document's text)."""
    doc = QTextDocument()
    if QtGui.Qt.mightBeRichText(tip):
        doc.setHtml(tip)
    else:
        doc.setPlainText(tip)
    return doc.toPlainText()


def test_cluster_list_tooltip_is_plain_text(session, qtbot):
    from explorer.widgets.clusters import ClustersPanel
    panel = ClustersPanel(session)
    qtbot.addWidget(panel)
    panel.show_result([{"name": NAME, "badcases": 3, "share": 1.0, "bound": 1,
                        "categories": ["<i>cat</i>"]}])
    tips = [shown(panel.proxy.index(r, 0).data(Qt.ItemDataRole.ToolTipRole))
            for r in range(panel.proxy.rowCount())]
    mine = [t for t in tips if "bold" in t]
    assert len(mine) == 1 and mine[0].startswith(NAME) and "<i>cat</i>" in mine[0], tips


def test_inputs_panel_tooltips_are_plain_text(session, qtbot):
    from explorer.core.store import LoadReport
    from explorer.widgets.inputs import InputsPanel
    panel = InputsPanel(session)
    qtbot.addWidget(panel)
    bad = LoadReport(path=f"/data/{NAME}.csv", error=f"/data/{NAME}.csv: <b>broken</b>")
    panel.show_result([bad])
    top = panel.tree.topLevelItem(0)
    assert shown(top.toolTip(0)).startswith(f"/data/{NAME}.csv")
    assert shown(top.child(0).toolTip(0)) == bad.error


def test_eval_and_run_pickers_tooltips_are_plain_text(session, qtbot):
    """The Clusters panel's eval picker and the Compare panel's run pickers show an eval or run
    id (a file name) in their tooltips: as its characters (before: rich text)."""
    from explorer.widgets.clusters import ClustersPanel
    from explorer.widgets.compare import ComparePanel
    clusters = ClustersPanel(session)
    qtbot.addWidget(clusters)
    clusters.show_evals([{"eval_id": NAME, "model": "m", "cases": 3},
                         {"eval_id": "plain", "model": "", "cases": 1}])
    assert shown(clusters.evals.itemData(1, Qt.ItemDataRole.ToolTipRole)) == NAME
    compare = ComparePanel(session)
    qtbot.addWidget(compare)
    compare._choices([{"run_id": NAME}, {"run_id": "r2", "label": "run two"}])
    for box in (compare.a, compare.b):
        tips = [box.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(box.count())]
        assert NAME in [shown(t) for t in tips if t], tips
