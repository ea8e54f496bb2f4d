"""Ambiguous cases (several equally good requests) are counted in the header and the report and
listed with their candidates in the Cases panel: the same request ids in two runs leave every
case unbound, counted here by hand."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort
from explorer.core.sections import run_all
from explorer.core.association import ambiguous_detail, bind_cases
from explorer.core.store import Store


@pytest.fixture()
def store():
    s = Store()
    s.add_run("a", engine_version="1", benchmark="b")
    s.add_run("b", engine_version="2", benchmark="b")
    ids = [f"q{i}" for i in range(40)]
    for run in "ab":
        s.append("requests", pd.DataFrame({"run_id": run, "request_id": ids,
                                           "ttft_ms": np.arange(40.0)}))
    # q0 .. q35 exist in both runs (ambiguous); q36 .. q39 only in run a (bound)
    s.con.execute("DELETE FROM requests WHERE run_id = 'b' AND request_id IN "
                  "('q36', 'q37', 'q38', 'q39')")
    bad = [i % 4 == 0 for i in range(40)]
    s.append("cases", pd.DataFrame({"case_id": [f"c{i:02d}" for i in range(40)],
                                    "request_id": ids, "correct": [not b for b in bad],
                                    "cluster": ["k" if b else None for b in bad],
                                    "category": "m"}))
    bind_cases(s)
    yield s
    s.close()


def test_detail_names_the_candidates(store):
    d = {a["case_id"]: a for a in ambiguous_detail(store)}
    assert len(d) == 36 and "c36" not in d
    assert d["c00"] == {"case_id": "c00", "reason": "id", "candidates": 2,
                        "requests": ["a / q0", "b / q0"]}


def test_cohort_header_and_report_count_them(store):
    from explorer.core.report import _md_cohort
    from explorer.widgets.painters.header import header_items
    c = run_all(store, Cohort("k"), {"sections": ["cohort"]})["cohort"].to_dict()
    # badcases c00, c04, ..., c36: all but c36 are ambiguous; control: 27 ambiguous, 3 bound
    bad_amb = sum(1 for i in range(0, 36, 4))
    ctl_amb = sum(1 for i in range(36) if i % 4)
    assert (c["ambiguous_badcases"], c["ambiguous_control"]) == (bad_amb, ctl_amb) == (9, 27)
    assert [a["case_id"] for a in c["ambiguous"]] == [f"c{i:02d}" for i in range(0, 36, 4)]
    items = {t: v for t, v, _ in header_items(c)}
    assert items["Ambiguous"] == "9 bad / 27 control"
    text = _md_cohort(c)
    assert "| Ambiguous (left unbound) | 9 badcases, 27 control cases" in text
    assert "`c00`: ambiguous: 2 equally good requests (its request id matches several " \
           "requests): `a / q0`, `b / q0`" in text


def test_cases_panel_lists_them_with_their_candidates(store, qtbot):
    from PySide6.QtCore import Qt

    from explorer.session import fetch_cases
    from explorer.widgets.cases import COLUMNS, CasesModel
    df = fetch_cases(store, ["c00", "c36"])
    m = CasesModel()
    m.set_frame(df)
    col = COLUMNS.index("request_id")
    cells = {df.at[r, "case_id"]: m.data(m.index(r, col)) for r in range(2)}
    assert cells["c36"] == "q36"
    assert cells["c00"].startswith("ambiguous: 2 equally good requests")
    row = list(df["case_id"]).index("c00")
    assert "a / q0, b / q0" in m.data(m.index(row, 0), Qt.ItemDataRole.ToolTipRole)
