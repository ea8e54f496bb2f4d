"""The Runs tab and the Inputs panel's run rows: published results on screen, the all-failed
run flagged, label and version edited by the user (UI -> store) and kept with the session."""
from __future__ import annotations

from pathlib import Path

import pytest
from explorer.core.store import Store

from tests.gui.conftest import on_screen

PUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "published"
pytestmark = pytest.mark.skipif(not PUB.is_dir(), reason=f"published artefacts missing: {PUB}")
FAILED = PUB / "er0080-bench-serve-all-failed-v0.25.1.json"
LAMBDA = PUB / "lambdalabs-a100-llama31-8b-fp8-tp1-len2048.json"


@pytest.fixture
def loaded(window, qtbot):
    window.session.load_paths([str(FAILED), str(LAMBDA)])
    qtbot.waitUntil(lambda: bool(window.session.data.get("runs"))
                    and window.session.runner.pending() == 0, timeout=60000)
    on_screen(window, qtbot, "runs")  # the Runs tab in front, as a user reading it
    return window


def _col(table, title):
    return next(c for c in range(table.columnCount())
                if table.horizontalHeaderItem(c).text() == title)


def _row(table, text):
    f = _col(table, "File")
    return next(i for i in range(table.rowCount()) if table.item(i, f).text() == text)


def test_runs_tab_shows_published_numbers_and_flags_the_failed_run(loaded):
    panel = loaded.panels["runs"]
    t = panel.table
    assert t.rowCount() == 2 and panel.message() is None
    bad = _row(t, str(FAILED))
    flags = _col(t, "Flags")
    assert t.item(bad, flags).text() == "no successful request"
    assert "8 failed" in t.item(bad, flags).toolTip()
    assert t.item(bad, 0).font().bold() and t.item(bad, _col(t, "Completed")).text() == "0"
    ok = _row(t, str(LAMBDA))
    assert t.item(ok, _col(t, "Mean TTFT")).text() == "113.74 ms"
    assert t.item(ok, _col(t, "Median TTFT")).text() == "162.05 ms"
    assert t.item(ok, _col(t, "Mean TPOT")).text() == "8.80 ms"
    t.selectRow(ok)
    d = panel.detail
    rows = {d.item(i, 0).text(): (d.item(i, 1).text(), d.item(i, 2).text())
            for i in range(d.rowCount())}
    assert rows["tpot_ms mean"] == ("8.80 ms", "8.78 ms")  # published vs the product's own
    assert rows["ttft_ms mean"] == ("113.74 ms", "113.74 ms")


def test_editing_version_in_the_runs_tab_reaches_the_store(loaded, qtbot):
    s = loaded.session
    t = loaded.panels["runs"].table
    ok = _row(t, str(LAMBDA))
    t.item(ok, 2).setText("0.6.0")  # what a double-click edit commits
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.store.scalar(
        "SELECT engine_version FROM runs WHERE source_path = ?", [str(LAMBDA)]) == "0.6.0",
        timeout=30000)
    assert s.store.scalar("SELECT version_source FROM runs WHERE source_path = ?",
                          [str(LAMBDA)]) == "user"
    qtbot.waitUntil(lambda: t.item(_row(t, str(LAMBDA)), _col(t, "Version from")).text() == "user", timeout=30000)


def test_inputs_panel_run_label_edit_is_saved_with_the_session(loaded, qtbot, tmp_path):
    s = loaded.session
    run_id = s.store.scalar("SELECT run_id FROM runs WHERE source_path = ?", [str(FAILED)])
    from PySide6.QtWidgets import QLineEdit
    label = loaded.panels["inputs"].findChild(QLineEdit, f"run-label:{run_id}")
    version = loaded.panels["inputs"].findChild(QLineEdit, f"run-version:{run_id}")
    assert label is not None and version is not None and version.text() == "0.25.1"
    assert "path: file" in version.toolTip()
    label.setText("all failed, opt-125m")
    label.editingFinished.emit()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.store.scalar(
        "SELECT label FROM runs WHERE run_id = ?", [run_id]) == "all failed, opt-125m",
        timeout=30000)
    path = tmp_path / "s.duckdb"
    s.store.save_as(path)
    again = Store.open(path)
    assert again.scalar("SELECT label FROM runs WHERE run_id = ?", [run_id]) == "all failed, opt-125m"
    assert again.count("run_metrics") == s.store.count("run_metrics") > 0
    again.close()


def test_report_html_lists_runs_and_run_level_regressions(tmp_path):
    from explorer.core.report_runs import run_versions_section, runs_section
    from explorer.widgets.painters.runs import run_versions_html, runs_html
    s = Store()
    s.load_file(FAILED)
    s.load_file(LAMBDA)
    for folder, ttft in (("vllm-0.6.1.post2", 130.0), ("vllm-0.7.0", 390.0)):
        d = tmp_path / folder
        d.mkdir()
        (d / "r.txt").write_text("============ Serving Benchmark Result ============\n"
                                 f"Mean TTFT (ms):                          {ttft:.2f}\n")
        s.load_file(d / "r.txt")
    html = runs_html(runs_section(s))
    assert "no successful request" in html and "8.80 ms" in html and "8.78 ms" in html
    rv = run_versions_html(run_versions_section(s))
    assert "REGRESSION" in rv and "+200.0 %" in rv
    s.close()


def test_engine_and_workload_edited_in_the_runs_tab(loaded, qtbot):
    s = loaded.session
    t = loaded.panels["runs"].table
    ok = _row(t, str(LAMBDA))
    t.item(ok, _col(t, "Engine")).setText("sglang")
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.store.scalar(
        "SELECT engine FROM runs WHERE source_path = ?", [str(LAMBDA)]) == "sglang", timeout=30000)
    t = loaded.panels["runs"].table
    t.item(_row(t, str(LAMBDA)), _col(t, "Workload")).setText("chat 2k")
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and "chat 2k" in (s.store.scalar(
        "SELECT config FROM runs WHERE source_path = ?", [str(LAMBDA)]) or ""), timeout=30000)
    qtbot.waitUntil(lambda: t.item(_row(t, str(LAMBDA)), _col(t, "Workload")).text() == "chat 2k",
                    timeout=30000)


def test_runs_tab_recomputes_what_was_not_published_and_exports(window, qtbot, tmp_path):
    """An aibrix per-request CSV publishes nothing: the detail lists every statistic its
    requests give, and the table exports to CSV and Parquet with the same numbers (checked
    against numpy on the CSV's own ttft column)."""
    import numpy as np
    import pandas as pd
    csv = PUB.parent / "aibrix" / "ps_experiment_v0.2.1_20250323" / "naive_output_2.1.csv"
    window.session.load_paths([str(csv)])
    qtbot.waitUntil(lambda: bool(window.session.data.get("runs"))
                    and window.session.runner.pending() == 0, timeout=60000)
    on_screen(window, qtbot, "runs")
    panel = window.panels["runs"]
    panel.table.selectRow(0)
    d = panel.detail
    rows = {d.item(i, 0).text(): (d.item(i, 1).text(), d.item(i, 2).text())
            for i in range(d.rowCount())}
    ttft = pd.read_csv(csv)["ttft"].to_numpy() * 1000
    assert rows["ttft_ms p90"] == ("", f"{np.percentile(ttft, 90):,.2f}")
    assert rows["ttft_ms mean"] == ("", f"{ttft.mean():,.2f}")
    assert {"tpot_ms p99", "e2e_ms median", "output_throughput", "request_goodput"} <= set(rows)
    assert panel.table.textElideMode() == panel.table.textElideMode().ElideRight
    for name in ("runs.csv", "runs.parquet"):
        panel.export_to(str(tmp_path / name))
    back = pd.read_parquet(tmp_path / "runs.parquet")
    assert back["recomputed ttft_ms p99"].iloc[0] == pytest.approx(np.percentile(ttft, 99))
    assert pd.read_csv(tmp_path / "runs.csv")["recomputed ttft_ms median"].iloc[0] == \
        pytest.approx(np.median(ttft))
