"""The portable query layer and routing of the warehouse source, without a Spark server
(SQLGlot only): what each translation rule writes, which queries go to the engine, URL
redaction and the column-mapping option. The Spark results are in test_warehouse_spark.py."""
import pytest

pytest.importorskip("sqlglot", reason="the spark extra is not installed (pip install '.[spark]')")

from explorer.core.sqlutil import load_query  # noqa: E402
from explorer.core.warehouse import parse_columns, redact_url  # noqa: E402
from explorer.core.warehouse.portable import translate  # noqa: E402
from explorer.core.warehouse.store import reads_remote  # noqa: E402

WAREHOUSE_QUERIES = ("analysis_case_view", "analysis_cohort", "analysis_heatmap_windows",
                     "analysis_versions", "analysis_versions_sample", "analysis_versions_accuracy",
                     "assoc_cases", "assoc_runs", "assoc_requests", "assoc_request_keys",
                     "assoc_pairs", "assoc_level1", "assoc_fuzzy", "assoc_ambiguous",
                     "assoc_write_links", "compare_run_stats", "runs_overview")


@pytest.mark.parametrize("name", WAREHOUSE_QUERIES)
def test_query_files_translate_to_spark(name):
    sql = load_query(name)
    params = {p: None for p in __import__("re").findall(r"\$(\w+)", sql)}
    text, args = translate(sql, params)
    unquoted = __import__("re").sub(r"'(?:[^'\\]|\\.)*'", "''", text)  # json paths keep $
    assert "$" not in unquoted
    assert " requests " not in f" {text} ".replace("(", " ").replace(")", " ")
    assert set(args) <= set(params)


def test_parameters_tables_and_literals():
    text, args = translate("SELECT count(*) FILTER (WHERE ttft_ms <= $t) / 2.0 FROM requests r "
                           "WHERE ($runs IS NULL OR list_contains($runs, run_id))",
                           {"t": 500, "runs": None})
    assert "FROM te_requests AS r" in text
    assert ":t" in text and args["t"] == 500
    assert "CAST(2.0 AS DOUBLE)" in text  # Spark would divide in DECIMAL(…, 6)
    assert "ARRAY_CONTAINS(CAST(NULL AS ARRAY<STRING>), run_id)" in text  # typed NULL array
    text, args = translate("SELECT * FROM requests WHERE run_id = ? AND request_id = ?", ["a", "b"])
    assert text.endswith("run_id = :p1 AND request_id = :p2") and args == {"p1": "a", "p2": "b"}
    with pytest.raises(ValueError, match="without a value: x"):
        translate("SELECT $x FROM requests", {})


def test_row_key_and_engine_context():
    text, _ = translate(load_query("assoc_requests"), {"all": True})
    assert "MONOTONICALLY_INCREASING_ID()" in text.upper() and "ROW_NUMBER" not in text.upper()
    text, _ = translate(load_query("analysis_case_view"))
    assert "ASOF" not in text.upper() and "te_engine_stats" not in text  # ectx is empty there
    # the DuckDB text itself is untouched
    assert "ASOF JOIN" in load_query("analysis_case_view")


def test_routing_by_the_tables_a_query_reads():
    assert reads_remote("SELECT count(*) FROM requests")
    assert reads_remote("SELECT * FROM _assoc_l1")
    assert reads_remote(load_query("analysis_cohort").replace("FROM cv", "FROM requests"))
    assert not reads_remote("SELECT count(*) FROM cases WHERE correct = false")
    assert not reads_remote("WITH requests AS (SELECT 1 AS x) SELECT * FROM requests")
    assert not reads_remote(load_query("analysis_clusters"))


def test_redact_and_columns_option():
    assert redact_url("sc://h:443/;token=abc;x-databricks-cluster-id=1") == \
        "sc://h:443/;x-databricks-cluster-id=1"
    assert redact_url("sc://h:15002;user_id=a;Password=p") == "sc://h:15002;user_id=a"
    assert parse_columns("run_id=replica, ttft_ms=ttft") == {"run_id": "replica", "ttft_ms": "ttft"}
    with pytest.raises(ValueError, match="'latency' is not a request column"):
        parse_columns("latency=x")
    with pytest.raises(ValueError, match="is not canonical=source"):
        parse_columns("ttft_ms")


def test_quantile_cont_is_sparks_exact_percentile():
    """DuckDB's quantile_cont(x, q) (numpy's linear interpolation) is Spark's percentile(x, q);
    SQLGlot's PERCENTILE_CONT(x, q) is refused by Spark ("requires 1 parameters"), which failed
    the Runs statistics (compare_run_stats) and with them the window's connect."""
    text, _ = translate("SELECT quantile_cont(ttft_ms, 0.9) FILTER (WHERE error IS NULL) "
                        "FROM requests")
    assert "PERCENTILE(ttft_ms, CAST(0.9 AS DOUBLE)) FILTER(WHERE error IS NULL)" in text
    assert "PERCENTILE_CONT" not in text.upper()
    text, _ = translate(load_query("compare_run_stats"),
                        {"run_ids": ["a"], "ttft_slo_ms": 1.0, "tpot_slo_ms": 1.0})
    assert "PERCENTILE_CONT" not in text.upper() and text.upper().count("PERCENTILE(") == 5


def test_list_form_quantile_is_sparks_percentile_of_an_array():
    """DuckDB's quantile_cont(x, [q1, q2, q3]) (one pass holding the values once) is Spark's
    percentile(x, array(q1, q2, q3)); DuckDB's lists index from 1, Spark's x[i] from 0, so
    [1] / [3] are written [0] / [2] (SQLGlot's index offsets). Run through Spark:
    test_warehouse_spark.py::test_runs_recomputed_statistics_equal_duckdb."""
    text, _ = translate("WITH s AS (SELECT quantile_cont(ttft_ms, [0.5, 0.9, 0.99]) FILTER "
                        "(WHERE error IS NULL) AS t FROM requests) SELECT t[1] AS a, t[3] AS c "
                        "FROM s")
    assert ("PERCENTILE(ttft_ms, ARRAY(CAST(0.5 AS DOUBLE), CAST(0.9 AS DOUBLE), "
            "CAST(0.99 AS DOUBLE))) FILTER(WHERE error IS NULL) AS t") in text
    assert "t[0] AS a, t[2] AS c" in text
    text, _ = translate(load_query("compare_run_stats"),
                        {"run_ids": ["a"], "ttft_slo_ms": 1.0, "tpot_slo_ms": 1.0})
    for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
        pre = m.split("_")[0]
        assert (f"{pre}_q[0] AS {m}_median, {pre}_q[1] AS {m}_p90, {pre}_q[2] AS {m}_p99"
                in text)


def test_isfinite_is_written_for_spark_and_means_the_same():
    """Spark has no isfinite (the SLA windows' arrival filter): written as not NaN and not
    +-inf; DuckDB evaluates the written condition as its own isfinite, NULL for NULL."""
    import duckdb
    text, _ = translate("SELECT count(*) FROM requests WHERE isfinite(arrival_s)")
    assert "ISFINITE" not in text.upper()
    assert "NOT ISNAN(arrival_s) AND ABS(arrival_s) <> CAST('Infinity' AS DOUBLE)" in text
    cond = text.split("WHERE ", 1)[1].replace("ISNAN", "isnan")
    rows = duckdb.sql(f"SELECT arrival_s, isfinite(arrival_s) AS want, {cond} AS got FROM "
                      "(VALUES (1.5), ('nan'::DOUBLE), ('inf'::DOUBLE), ('-inf'::DOUBLE), "
                      "(NULL::DOUBLE)) t(arrival_s)").fetchall()
    assert [r[1] for r in rows] == [r[2] for r in rows] == [True, False, False, False, None]


def test_materialized_hint_is_dropped_for_spark():
    """DuckDB's [NOT] MATERIALIZED CTE hint (the heatmap's windows query) is not Spark SQL: the
    translation leaves it out and keeps the CTE."""
    import sqlglot
    from explorer.core.sqlutil import load_query
    from explorer.core.warehouse.portable import translate
    sql = load_query("analysis_heatmap_windows")
    assert "NOT MATERIALIZED" in sql
    text, _args = translate(sql, {"window_s": 10.0, "runs": None})
    assert "MATERIALIZED" not in text.upper()
    assert "WITH r AS (" in text
    sqlglot.parse_one(text, read="spark")  # Spark's grammar reads it
