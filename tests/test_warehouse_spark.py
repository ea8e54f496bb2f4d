"""The warehouse source against a real Spark Connect server (explorer.core.warehouse).

The session fixture spark_url (tests/conftest.py) starts a local Spark Connect server (pyspark's
jars, Java 17) and stops it after the session; TE_SPARK_URL=sc://host:port uses a running one. The same simulated
requests are analysed by the embedded DuckDB (the demo store) and by Spark (those requests
exported to Parquet, the eval cases sent from the client): binding, cohort, comparison (to
1e-9), tree, heatmap, versions and SLA must agree.
"""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed "
                                                "(pip install '.[spark]')")

SECTIONS = ("cohort", "comparison", "tree", "heatmap", "versions", "sla")
N_REQUESTS = 1200  # small: the server start and Spark's per-query cost dominate


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """(DuckDB store with the demo, Parquet file of its requests with their run fields)."""
    from explorer.core.store import Store
    from explorer.demo import load_demo
    ref = Store()
    load_demo(ref, n_requests=N_REQUESTS)
    out = tmp_path_factory.mktemp("wh") / "requests.parquet"
    ref.con.execute(f"COPY (SELECT r.*, ru.engine_version, ru.model, ru.engine, ru.benchmark "
                    f"FROM requests r JOIN runs ru USING (run_id)) TO '{out}' (FORMAT parquet)")
    return ref, out


def _cases_only(ref):
    """A fresh local store holding the demo's evals and cases (no requests, no links)."""
    from explorer.core.store import Store
    loc = Store()
    for t in ("evals", "cases"):
        loc.append(t, ref.con.execute(f"SELECT * FROM {t}").df())
    return loc


def assert_close(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            assert_close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, f"{path}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.fixture(scope="session")
def both(spark_url, demo):
    """(DuckDB report doc, Spark report doc, WarehouseStore) for the demo's default cohort."""
    from explorer.core.analysis import Cohort, default_cluster
    from explorer.core.report import build_report
    from explorer.core.warehouse import open_warehouse
    ref, parquet = demo
    ws = open_warehouse(_cases_only(ref), spark_url, f"parquet:{parquet}")
    cohort = Cohort(default_cluster(ref))
    params = {"sections": SECTIONS}
    a = build_report(ref, cohort, params, whatif=False, cached=False).doc
    b = build_report(ws, cohort, params, whatif=False, cached=False).doc
    yield a, b, ws
    ws.close()


def test_binding_in_the_engine_equals_duckdb(both, demo):
    ref, _ = demo
    _, _, ws = both
    q = "SELECT case_id, run_id, request_id, level, score FROM case_links ORDER BY case_id"
    a, b = ref.con.execute(q).fetchall(), ws.local.con.execute(q).fetchall()
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x[:4] == y[:4]
        assert math.isclose(x[4], y[4], rel_tol=1e-9)


@pytest.mark.parametrize("section", SECTIONS)
def test_sections_equal_duckdb(both, section):
    a, b, _ = both
    assert "status" not in a[section], a[section]  # the section has data on the DuckDB side
    got, want = a[section], b[section]
    if section == "sla" and "diagnosis" in got:  # the period replay is local only
        assert want["diagnosis"].pop("replay")["status"] == "no_data"
        got["diagnosis"].pop("replay", None)
    assert_close(got, want, section)


def test_a_second_open_warehouse_binds_and_both_keep_answering(both, demo, spark_url):
    """Two connections in one process (a second window, a report beside the window): binding
    checkpoints each stage, and pyspark bound a checkpoint to the process's active session, so
    the second connection's binding failed with DATAFRAME_NOT_FOUND (spark._bound)."""
    from explorer.core.analysis import Cohort, compare_metrics, default_cluster
    from explorer.core.warehouse import open_warehouse
    ref, parquet = demo
    _, _, ws = both
    cohort = Cohort(default_cluster(ref))
    want = compare_metrics(ref, cohort).to_dict()
    other = open_warehouse(_cases_only(ref), spark_url, f"parquet:{parquet}")
    try:
        q = "SELECT case_id, run_id, request_id, level FROM case_links ORDER BY case_id"
        assert other.local.con.execute(q).fetchall() == ref.con.execute(q).fetchall()
        assert_close(compare_metrics(other, cohort).to_dict(), want, "second")
    finally:
        other.close()
    assert_close(compare_metrics(ws, cohort).to_dict(), want, "first, after the second closed")


SLA_PARAMS = {"window_s": 30.0, "thresholds": {"ttft_ms": 1200.0, "tpot_ms": 50.0}}


@pytest.fixture(scope="module")
def sla_both(both, demo):
    """(DuckDB report doc, Spark report doc, meta.engine) with the SLA over time (the `both`
    fixture's warehouse session), its windows judged so that some meet the SLA and two runs of
    failing ones form violation periods."""
    from explorer.core.analysis import Cohort, default_cluster
    from explorer.core.report import build_report
    ref, _ = demo
    ws = both[2]
    params = {"sections": ("sla", "sla_diagnosis"), "sla": SLA_PARAMS}
    cohort = Cohort(default_cluster(ref))
    a = build_report(ref, cohort, params, whatif=False, cached=False).doc
    b = build_report(ws, cohort, params, whatif=False, cached=False).doc
    return a, b, ws.engine_meta()


def test_sla_windows_from_spark_equal_duckdb_window_by_window(sla_both, demo):
    a, b, meta = sla_both
    wa, wb = a["sla"]["windows"], b["sla"]["windows"]
    assert len(wa) == len(wb) > 20
    assert {w["met"] for w in wa} == {True, False}  # both kinds of window are compared
    for x, y in zip(wa, wb):  # P95: DuckDB quantile_cont and Spark percentile, both linear
        assert_close(x, y, f"window {x['run_id']} {x['k']}")
    # the same P95 from numpy's default (linear) over the window's requests, independently
    import numpy as np
    w = next(x for x in wb if x["met"] is False and x["n"] > 50)
    ref, _ = demo
    vals = ref.con.execute(
        "WITH r AS (SELECT *, min(arrival_s) OVER (PARTITION BY run_id) AS t0 FROM requests) "
        "SELECT ttft_ms FROM r WHERE run_id = ? AND floor((arrival_s - t0) / ?) = ? "
        "AND ttft_ms IS NOT NULL", [w["run_id"], SLA_PARAMS["window_s"], w["k"]]).fetchnumpy()
    assert math.isclose(np.percentile(vals["ttft_ms"], 95), w["p95_ttft_ms"], rel_tol=1e-12)
    assert meta["rows_scanned"] == meta["table_rows"]  # one read of the file, then the cache


def test_sla_diagnosis_from_spark_equals_duckdb(sla_both):
    a, b, _meta = sla_both
    da, db = dict(a["sla"]["diagnosis"]), dict(b["sla"]["diagnosis"])
    assert da["windows_in_periods"] > 0 and len(da["causes"]) > 0
    assert db.pop("replay")["status"] == "no_data"  # the replay of the period is local only
    da.pop("replay", None)
    assert_close(da, db, "diagnosis")


def test_meta_engine_counts_what_came_back(both):
    a, b, ws = both
    assert a["meta"]["engine"]["kind"] == "duckdb"
    m = b["meta"]["engine"]
    assert m["kind"] == "spark" and m["table"].startswith("parquet:")
    assert set(m) >= {"kind", "url", "table", "rows_scanned", "rows_fetched", "seconds"}
    assert m["table_rows"] == N_REQUESTS * 2  # two engine versions replay the same trace
    assert m["rows_scanned"] >= m["table_rows"]  # each pushed-down query reads the file
    assert m["seconds"] > 0 and m["rows_fetched"] > 0
    # fetched: the links and the cohort's rows (one per case at most), runs and aggregates
    n_cases = ws.local.con.execute("SELECT count(*) FROM cases").fetchall()[0][0]
    assert m["rows_fetched"] < 3 * n_cases + 1000


def _cli(*args, cwd):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "explorer", "report", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="session")
def cases_csv(demo, tmp_path_factory):
    """The demo's cases as a generic eval CSV (request_id, correct, category, ...)."""
    ref, _ = demo
    p = tmp_path_factory.mktemp("cases") / "cases.csv"
    ref.con.execute(f"COPY (SELECT case_id AS id, request_id, category, prompt, reference, "
                    f"prediction, correct FROM cases ORDER BY case_id LIMIT 400) "
                    f"TO '{p}' (HEADER)")
    return p


def test_cli_unreachable_server_is_a_clear_error(tmp_path, cases_csv):
    r = _cli(str(cases_csv), "--warehouse", "sc://127.0.0.1:9", "--requests-table", "t",
             "--out", str(tmp_path / "out"), cwd=Path(__file__).parents[1])
    assert r.returncode == 1
    assert "cannot reach the Spark Connect server at 127.0.0.1:9" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_missing_table_and_columns_are_named(tmp_path, spark_url, cases_csv, demo):
    root = Path(__file__).parents[1]
    r = _cli(str(cases_csv), "--warehouse", spark_url, "--requests-table", "no_such_table",
             "--out", str(tmp_path / "o1"), cwd=root)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "requests table 'no_such_table' not found" in r.stderr
    bad = tmp_path / "bad.parquet"
    ref, _ = demo
    ref.con.execute(f"COPY (SELECT request_id AS col_a, ttft_ms AS col_b FROM requests LIMIT 5) "
                    f"TO '{bad}' (FORMAT parquet)")
    r = _cli(str(cases_csv), "--warehouse", spark_url, "--requests-table", f"parquet:{bad}",
             "--out", str(tmp_path / "o2"), cwd=root)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no column maps to a request metric (columns: col_a, col_b" in r.stderr


def test_cli_report_from_the_warehouse(tmp_path, spark_url, cases_csv, demo):
    """The command line end to end, columns renamed in the table and mapped back."""
    ref, _ = demo
    src = tmp_path / "renamed.parquet"
    ref.con.execute(f"COPY (SELECT run_id AS replica, request_id, arrival_s, ttft_ms / 1000.0 "
                    f"AS ttft_s, tpot_ms, e2e_ms, kv_cache_hit_rate, num_preemptions, "
                    f"batch_size, prompt_tokens FROM requests) TO '{src}' (FORMAT parquet)")
    out = tmp_path / "out"
    r = _cli(str(cases_csv), "--warehouse", spark_url, "--requests-table", f"parquet:{src}",
             "--requests-columns", "run_id=replica", "--no-whatif", "--format", "json,md",
             "--out", str(out), cwd=Path(__file__).parents[1])
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "report.json").read_text())
    m = doc["meta"]["engine"]
    assert m["kind"] == "spark" and m["columns"]["ttft_ms"] == "ttft_s"
    assert m["rows_scanned"] >= N_REQUESTS * 2
    assert f"Requests from: spark {spark_url}, table parquet:{src}" in (out / "report.md").read_text()
    # the local engine on the same cases and requests
    from explorer.core.store import Store
    from explorer.core import pipeline
    from explorer.core.analysis import Cohort, compare_metrics, summarize_cohort
    loc = Store()
    loc.load_paths([str(cases_csv)])
    loc.append("requests", ref.con.execute(
        "SELECT run_id, request_id, arrival_s, ttft_ms, tpot_ms, e2e_ms, kv_cache_hit_rate, "
        "num_preemptions, batch_size, prompt_tokens FROM requests").df())
    for run in ref.con.execute("SELECT run_id FROM runs").fetchall():
        loc.add_run(run[0])
    pipeline.prepare(loc)
    cohort = Cohort(doc["cohort"]["cluster"])
    assert_close(summarize_cohort(loc, cohort).to_dict(), doc["cohort"], "cohort")
    assert_close(compare_metrics(loc, cohort).to_dict(), doc["comparison"], "comparison")


def test_cli_table_without_run_id_equals_the_local_report(tmp_path, spark_url, cases_csv, demo):
    """A Parquet table without run_id (one run, named after the file), its columns in other
    names the vocabulary maps (ttft in seconds by suffix, TPOT bare and in seconds: guessed from
    its median, input_tokens, an error column of 'ok' / ''), is one run in the warehouse as in
    the local loader: every section both compute is equal."""
    ref, _ = demo
    src = tmp_path / "one_run.parquet"
    run = ref.con.execute("SELECT min(run_id) FROM requests").fetchall()[0][0]
    ref.con.execute(f"COPY (SELECT request_id AS id, arrival_s AS timestamp, ttft_ms / 1000.0 AS "
                    f"ttft_s, tpot_ms / 1000.0 AS tpot, e2e_ms AS e2e_latency_ms, "
                    f"kv_cache_hit_rate, num_preemptions, batch_size, prompt_tokens AS "
                    f"input_tokens, completion_tokens AS output_tokens, CASE WHEN request_id "
                    f"LIKE '%3' THEN '' ELSE 'ok' END AS error, 'demo-model' AS model "
                    f"FROM requests WHERE run_id = '{run}' ORDER BY arrival_s) TO '{src}' "
                    f"(FORMAT parquet)")
    root = Path(__file__).parents[1]
    common = ("--no-whatif", "--no-replay", "--format", "json")
    r = _cli(str(cases_csv), "--warehouse", spark_url, "--requests-table", f"parquet:{src}",
             *common, "--out", str(tmp_path / "wh"), cwd=root)
    assert r.returncode == 0, r.stderr
    r2 = _cli(str(src), str(cases_csv), *common, "--out", str(tmp_path / "loc"), cwd=root)
    assert r2.returncode == 0, r2.stderr
    wh = json.loads((tmp_path / "wh" / "report.json").read_text())
    loc = json.loads((tmp_path / "loc" / "report.json").read_text())
    m = wh["meta"]["engine"]
    assert m["kind"] == "spark" and m["table_rows"] == N_REQUESTS
    assert m["columns"]["run_id"] == "(table:one_run)" and m["columns"]["tpot_ms"] == "tpot"
    assert m["columns"]["ttft_ms"] == "ttft_s" and m["columns"]["request_id"] == "id"
    assert wh["cohort"]["cluster"] == loc["cohort"]["cluster"]
    both = [k for k in SECTIONS + ("binding",) if k in loc and isinstance(loc[k], dict)
            and "status" not in loc[k] and k in wh]
    assert {"cohort", "tree", "heatmap"} <= set(both), both
    assert "windows" in wh["sla"] and "diagnosis" in wh["sla"]  # SLA over time in the engine
    for k in both:  # all agree but the replay of the worst SLA period (local only)
        assert set(loc[k]) == set(wh[k]), k
        a, b = dict(loc[k]), dict(wh[k])
        if "diagnosis" in a:
            a["diagnosis"], b["diagnosis"] = dict(a["diagnosis"]), dict(b["diagnosis"])
            a["diagnosis"].pop("replay", None)
            assert b["diagnosis"].pop("replay")["status"] == "no_data"
        assert_close(a, b, k)


def test_runs_recomputed_statistics_equal_duckdb(both, demo):
    """The Runs tab's statistics recomputed from the requests (quantile_cont, written as
    Spark's percentile) equal DuckDB's, run by run; ITL is not there (the warehouse carries no
    token timings)."""
    from explorer.core.analysis.runcompare.pairs import recomputed
    ref, _ = demo
    _, _, ws = both
    a, b = recomputed(ref), recomputed(ws)
    assert set(a) == set(b) and a
    for run in a:
        x = {(r["metric"], r["stat"]): r["value"] for r in a[run]}
        y = {(r["metric"], r["stat"]): r["value"] for r in b[run]}
        assert {k for k in x if k[0] != "itl_ms"} == set(y) and ("ttft_ms", "p99") in y
        for k in y:
            assert math.isclose(x[k], y[k], rel_tol=1e-9), (run, k)
