"""The Clusters and Cases TSV copies neutralise formula prefixes (OWASP CSV injection) and keep
one row per line whatever a name holds; Cases tooltips show a case id as its characters."""
from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt

from tests.gui.test_plain_tooltips import shown

EVIL = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3", "a\tb\nc"]


def _cases_frame() -> pd.DataFrame:
    n = len(EVIL)
    return pd.DataFrame({"case_id": [f"<b>c{i}</b>" for i in range(n)], "prompt": EVIL,
                         "prediction": ["p"] * n, "correct": [False] * n, "cluster": EVIL,
                         "category": ["cat"] * n, "request_id": [None] * n, "level": [None] * n,
                         "run_id": [None] * n, "ambiguous": [None] * n})


def test_cases_copy_and_tooltips(session, qtbot):
    from explorer.widgets.cases import CasesPanel
    panel = CasesPanel(session)
    qtbot.addWidget(panel)
    panel.model.set_frame(_cases_frame())
    text = panel.copy_text()
    lines = text.split("\n")
    assert len(lines) == 1 + len(EVIL), lines  # the tab / newline in a name broke no row
    assert all(len(ln.split("\t")) == len(lines[0].split("\t")) for ln in lines)
    for ln in lines[1:]:
        for c in ln.split("\t"):
            assert not c.startswith(("=", "+", "@", "-")), ln
    assert "'=HYPERLINK(" in text and "'+cmd|" in text and "'@SUM(" in text and "'-2+3" in text
    tip = panel.model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert shown(tip).startswith("<b>c0</b>"), tip


def test_clusters_copy_neutralises_formulas(session, qtbot):
    from explorer.widgets.clusters import ClustersPanel
    panel = ClustersPanel(session)
    qtbot.addWidget(panel)
    panel.show_result([{"name": n, "badcases": 3, "share": 0.2, "bound": 1, "categories": ["c"]}
                       for n in EVIL])
    lines = panel.copy_text().split("\n")
    width = len(lines[0].split("\t"))
    assert all(len(ln.split("\t")) == width for ln in lines), lines
    firsts = [ln.split("\t")[0] for ln in lines[1:]]
    assert not [f for f in firsts if f.startswith(("=", "+", "@", "-"))], firsts
