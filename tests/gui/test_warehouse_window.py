"""File > Connect to warehouse...: the dialog remembers URL / table / mapping without
credentials; the Session binds and analyses in a real Spark Connect server (the spark_url
fixture), with Cancel stopping the remote query; a server that is not there is one status line.
"""
from __future__ import annotations

import math
import time

import pytest
from PySide6.QtCore import QSettings

from tests.gui.conftest import synthetic_store


def test_dialog_remembers_without_credentials(app, tmp_path):
    from explorer.widgets.warehouse import WarehouseDialog
    ini = tmp_path / "s.ini"
    st = QSettings(str(ini), QSettings.Format.IniFormat)
    d = WarehouseDialog(st)
    d.url.setText("sc://spark.example:15002;token=s3cr3t;user_id=ana")
    d.table.setText("prod.requests")
    d.columns.setText("run_id=replica")
    assert d.values() == ("sc://spark.example:15002;token=s3cr3t;user_id=ana", "prod.requests",
                          "run_id=replica")
    d.remember()
    assert "s3cr3t" not in ini.read_text()
    again = WarehouseDialog(QSettings(str(ini), QSettings.Format.IniFormat))
    assert again.values() == ("sc://spark.example:15002;user_id=ana", "prod.requests",
                              "run_id=replica")


def _cases_session(session, store):
    """The session over a store with the synthetic cases only (no requests, no links)."""
    from explorer.core.store import Store
    local = Store()
    for t in ("evals", "cases"):
        local.append(t, store.con.execute(f"SELECT * FROM {t}").df())
    session.store.close()
    session.store = local
    return local


def test_unreachable_server_is_one_status_line(session, qtbot):
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    store, _, _ = synthetic_store(200, 50)
    local = _cases_session(session, store)
    session.connect_warehouse("sc://127.0.0.1:9", "t")
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    assert session.errors and "cannot reach the Spark Connect server" in session.errors[-1]
    assert session.store is local  # nothing changed


@pytest.fixture
def parquet(tmp_path):
    store, req, cases = synthetic_store(1500, 300)
    p = tmp_path / "requests.parquet"
    store.con.execute(f"COPY (SELECT r.*, ru.engine_version, ru.benchmark, ru.engine FROM "
                      f"requests r JOIN runs ru USING (run_id)) TO '{p}' (FORMAT parquet)")
    return store, p


def test_connect_binds_and_analyses_in_the_warehouse(session, qtbot, spark_url, parquet):
    from explorer.core.analysis import Cohort, compare_metrics
    store, p = parquet
    _cases_session(session, store)
    session.connect_warehouse(spark_url, f"parquet:{p}")
    qtbot.waitUntil(lambda: getattr(session.store, "remote", False), timeout=600000)
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and "comparison" in session.data,
                    timeout=600000)
    assert not session.errors, session.errors
    assert session.store.engine_meta()["table_rows"] == 1500
    # the same cohort on the embedded DuckDB (the synthetic store binds every case at level 1)
    ref = compare_metrics(store, Cohort(session.cluster)).to_dict()
    got = session.data["comparison"]
    assert [r["metric"] for r in got] == [r["metric"] for r in ref]
    for a, b in zip(ref, got):
        for k in ("bad_mean", "control_mean", "p_value", "cohens_d"):
            if a[k] is None:
                assert b[k] is None
            else:
                assert math.isclose(a[k], b[k], rel_tol=1e-9), (a["metric"], k)
        assert (a["n_bad"], a["n_control"]) == (b["n_bad"], b["n_control"])


def test_a_saved_warehouse_session_reconnects_when_reopened(session, qtbot, spark_url, parquet,
                                                            tmp_path):
    """Saved while connected, the session file holds the cases and the warehouse (not the
    requests); reopened, it connects again and the comparison is the one it had."""
    store, p = parquet
    _cases_session(session, store)
    session.connect_warehouse(spark_url, f"parquet:{p}")
    qtbot.waitUntil(lambda: getattr(session.store, "remote", False) and
                    session.runner.pending() == 0 and "comparison" in session.data, timeout=600000)
    before = session.data["comparison"]
    path = tmp_path / "wh.duckdb"
    saved = []
    session.save_session(str(path), on_done=lambda: saved.append(1))
    qtbot.waitUntil(lambda: bool(saved), timeout=60000)
    session.open_session(str(path))
    qtbot.waitUntil(lambda: not getattr(session.store, "remote", False), timeout=60000)
    qtbot.waitUntil(lambda: getattr(session.store, "remote", False) and
                    session.runner.pending() == 0 and "comparison" in session.data, timeout=600000)
    assert not session.errors, session.errors
    assert session.store.engine_meta()["table_rows"] == 1500
    assert session.data["comparison"] == before


def test_a_failing_payload_query_keeps_the_local_store(session, qtbot, spark_url, parquet,
                                                       monkeypatch):
    """A query of the panels' payload that the engine refuses (as the Runs statistics' were:
    PERCENTILE_CONT) is one status line, and the window stays on the local store it shows:
    before, the store was already the warehouse's and no analysis ever ran (a silent stall)."""
    from explorer.core import report_runs
    from explorer.core.warehouse import WarehouseError
    store, p = parquet
    local = _cases_session(session, store)

    def refused(st):
        if getattr(st, "remote", False):
            raise WarehouseError("the warehouse query failed: refused here")
        return []
    monkeypatch.setattr(report_runs, "runs_section", refused)
    session.connect_warehouse(spark_url, f"parquet:{p}")
    qtbot.waitUntil(lambda: bool(session.errors) and session.runner.pending() == 0, timeout=300000)
    assert session.errors == ["the warehouse query failed: refused here"]
    assert session.store is local and "Traceback" not in session.errors[0]


def test_a_section_raising_in_the_warehouse_is_said_in_its_panel(session, qtbot, spark_url,
                                                                 parquet, monkeypatch):
    """A section that raises in remote mode arrives as its Failure (the panel says why), the
    other sections still arrive and nothing stays pending."""
    from explorer.core import sections
    store, p = parquet
    _cases_session(session, store)
    real = sections.compute_heatmap

    def broken(st, *a, **k):
        if getattr(st, "remote", False):
            raise RuntimeError("heatmap broke in the engine")
        return real(st, *a, **k)
    monkeypatch.setattr(sections, "compute_heatmap", broken)
    session.connect_warehouse(spark_url, f"parquet:{p}")
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and "conclusion" in session.data,
                    timeout=300000)
    from explorer.session import Failure
    hm = session.data["heatmap"]
    assert isinstance(hm, Failure) and not hm.nodata
    assert "heatmap broke in the engine" in hm.message and "Traceback" not in hm.message
    assert isinstance(session.data["comparison"], list) and not session.errors


def test_cancel_stops_the_remote_query(session, qtbot, spark_url, parquet):
    store, p = parquet
    local = _cases_session(session, store)
    labels = []
    session.runner.busy.connect(lambda text, d, n: labels.append(text))
    session.connect_warehouse(spark_url, f"parquet:{p}")
    qtbot.waitUntil(lambda: any("Binding" in t for t in labels), timeout=300000)
    time.sleep(1.0)  # a stage is running in the engine
    t0 = time.perf_counter()
    session.cancel()
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=120000)
    assert session.store is local  # the half-made connection was dropped
    assert time.perf_counter() - t0 < 30  # not the whole binding (about a minute here)
