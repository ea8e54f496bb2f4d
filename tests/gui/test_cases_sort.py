"""The Cases table sorts by correctness as the panel lists them (badcases first, then the
correct cases, then the cases of unknown correctness; unknown last in either direction, issue 33), with None, NaN and pd.NA unknown."""
from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from explorer.widgets.cases import COLUMNS, CasesModel


def test_sort_by_correct_puts_badcases_first_and_unknown_last(qapp):
    m = CasesModel()
    m.set_frame(pd.DataFrame({"case_id": list("abcdef"),
                              "correct": pd.Series([True, None, False, np.nan, True, pd.NA],
                                                   dtype=object)}))
    m.sort(COLUMNS.index("correct"), Qt.SortOrder.AscendingOrder)
    assert m.df["case_id"].tolist() == ["c", "a", "e", "b", "d", "f"]  # stable within a group
    m.sort(COLUMNS.index("correct"), Qt.SortOrder.DescendingOrder)
    assert m.df["case_id"].tolist() == ["a", "e", "c", "b", "d", "f"]  # unknown last either way
