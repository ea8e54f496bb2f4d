"""Issue 33, item 1: every table sorts numbers as numbers, missing values last, in both
directions. The comparison table, sorted by each column, lists its metrics in the order pandas
sorts the underlying result (session.data["comparison"]) by that column's field."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from explorer.core.names import label
from explorer.widgets.tablemodel import KEY_ROLE, RowsModel

from tests.gui.conftest import on_screen

# the field each comparison column sorts by (painters/comparison.HEADERS order)
FIELDS = [None, "bad_mean", "control_mean", "diff_pct", "p_value", "p_adjusted", "cohens_d",
          "rank_biserial", "n_bad"]


def _values(frame: pd.DataFrame, col: int) -> pd.Series:
    if col == 0:
        return frame["metric"].map(lambda m: label(m, False))
    return pd.to_numeric(frame[FIELDS[col]], errors="coerce")


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x != x and y != y) or x == y or (isinstance(x, float) and math.isclose(x, y))
        for x, y in zip(a, b))


@pytest.mark.parametrize("col", range(len(FIELDS)))
@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
def test_comparison_sorts_like_pandas(loaded, qtbot, col, order):
    window, _req, _cases = loaded
    panel = on_screen(window, qtbot, "comparison")
    rows = window.session.data["comparison"]
    frame = pd.DataFrame(rows)
    panel.view.sortByColumn(col, order)
    model = panel.view.model()
    shown = [model.index(r, 0).data(KEY_ROLE) for r in range(model.rowCount())]
    values = _values(frame, col)
    by_metric = dict(zip(frame["metric"], values))
    expected = values.sort_values(ascending=order == Qt.SortOrder.AscendingOrder,
                                  na_position="last", kind="stable").tolist()
    got = [by_metric[m] for m in shown]
    assert _same(got, expected), (col, got, expected)


def test_rows_model_puts_missing_last_both_ways(qapp):
    m = RowsModel(["x"])
    vals = [3.0, None, -55.0, float("nan"), 21.5, -1.0, 263.4, 40.9, 2]
    m.set_rows([[str(v)] for v in vals], [[v] for v in vals])
    for order, expected in ((Qt.SortOrder.AscendingOrder, [-55.0, -1.0, 2, 3.0, 21.5, 40.9, 263.4]),
                            (Qt.SortOrder.DescendingOrder, [263.4, 40.9, 21.5, 3.0, 2, -1.0, -55.0])):
        m.sort(0, order)
        got = [vals[k] for k in m.keys]
        assert got[:7] == expected
        assert all(v is None or v != v for v in got[7:])
