"""Column names that come from data or from a caller's params are checked against what DuckDB
binds, not against a second hand-kept list (issue 32, Deliver 5): the metric lists the analyses
accept (SLA thresholds, heatmap axes, the cohort frame's metrics, the engine context) name
columns of the tables and queries they are pasted into (quoted) with the types they need, and a
selection's columns are checked against its row view before any SQL runs."""
import pandas as pd
import pytest

from explorer.core import schema
from explorer.core.analysis import cohort, heatmap
from explorer.core.selection import (And, InSet, Not, Range, SelectionError, TreePath, columns_of,
                                     select_cases, select_requests, view_columns)
from explorer.core.sqlutil import load_query

NUMERIC = ("DOUBLE", "INTEGER", "BIGINT", "FLOAT", "HUGEINT", "SMALLINT", "DECIMAL")


def _types(con, sql: str, params=None) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM (\n{sql}\n) AS q",
                                            params or {}).fetchall()}


def test_request_metrics_are_numeric_request_columns(store):
    """schema.REQUEST_METRICS (SLA thresholds, the tree's features, the causal graph's nodes)
    and the request-level heatmap axes: numeric columns of `requests` as DuckDB created it."""
    types = _types(store.con, "SELECT * FROM requests")
    for m in [*schema.REQUEST_METRICS, *heatmap.REQUEST_AXES]:
        assert m in types, m
        assert types[m].startswith(NUMERIC), (m, types[m])


def test_window_metrics_are_the_window_querys_columns(store):
    got = _types(store.con, load_query("analysis_heatmap_windows"),
                 {"window_s": 10.0, "runs": None})
    assert set(got) - {"run_id", "w"} == set(heatmap.WINDOW_METRICS)


def test_the_cohort_frames_metrics_are_case_view_or_context_columns(store):
    view = view_columns(store.con, "analysis_case_view")
    context = _types(store.con, load_query("request_engine_context"))
    for m in (*cohort.ENGINE_METRICS, *cohort.CASE_METRICS, *cohort.EXTRA_METRICS):
        assert m in view, m
    assert set(cohort.CONTEXT_METRICS) <= set(context)
    assert set(schema.CONTEXT_METRICS) <= set(context)


def test_request_view_has_every_requests_column(store):
    assert set(schema.columns("requests")) <= set(view_columns(store.con, "analysis_request_view"))


def test_columns_of_a_predicate():
    p = And(Range("a", 1), Not(InSet("b", ("x",))), TreePath((("c", "le", 1.0), ("a", "gt", 0.0))))
    assert columns_of(p) == ["a", "b", "c"]
    assert columns_of(None) == []


@pytest.mark.parametrize("pred", [
    Range("no_such_metric", 1), InSet('x" OR 1=1 --', ("a",)),
    Not(TreePath((("ttft_ms", "le", 1.0), ("nope", "gt", 0.0))))])
def test_an_unknown_column_is_refused_before_any_sql_runs(store, pred):
    store.add_run("r1")
    store.append("requests", pd.DataFrame({"run_id": ["r1"], "request_id": ["a"],
                                           "ttft_ms": [1.0]}))
    unknown = [c for c in columns_of(pred) if c not in ("ttft_ms",)]
    for select in (select_cases, select_requests):
        with pytest.raises(SelectionError) as e:
            select(store, pred)
        assert all(repr(c) in str(e.value) for c in unknown)
        assert "ttft_ms" in str(e.value)  # it lists the columns the view has
    assert len(select_requests(store, Range("ttft_ms", 0, 2))) == 1
