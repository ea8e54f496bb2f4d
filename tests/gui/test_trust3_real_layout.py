"""Issue 33, third round: what the window showed on real files (aibrix ps_experiment naive 0.5
req/s on 0.2.1 and 0.3.0 with the MMLU-Pro Llama-3.1 8B / 70B outputs, 1366x768):

- the SLA bars drew 14 groups in a 60 px plot, every tick label on top of the next;
- SLA over time put the two runs (benchmarked weeks apart) at 0 and 75,000 minutes, two vertical
  lines, both named "naive_output_0.5" in the legend;
- the Versions table showed 3 of its 5 rows, the chart took the rest;
- "chars" was English in the Chinese comparison table (the conclusion said 字符)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from tests.gui.conftest import on_screen, synthetic_store

AIBRIX = ("aibrix:0.2.1:naive_output_0.5", "aibrix:0.3.0:naive_output_0.5")


def _sla(tenants: int = 56) -> dict:
    by = {"version": [{"key": "0.2.1", "share": 0.07, "n": 55}, {"key": "0.3.0", "share": 0.07, "n": 55}],
          "run": [{"key": r, "share": 0.07, "n": 55} for r in AIBRIX],
          "tenant": [{"key": str(100 + i), "share": (i % 3) / 2, "n": 2} for i in range(tenants)]}
    return {"thresholds": {"ttft_ms": 500.0, "tpot_ms": 50.0},
            "attainment": {"share": 0.07, "n": 110, "n_met": 8}, "by": by}


def test_sla_bars_never_overlap_their_labels(qtbot):
    from explorer.widgets.painters.sla import MAX_BARS, bars_that_fit, paint_sla
    w = pg.PlotWidget(background="w")
    qtbot.addWidget(w)
    for height in (160, 260, 600):
        w.resize(780, height)
        w.show()
        qtbot.waitExposed(w)
        plot = w.getPlotItem()
        assert paint_sla(plot, _sla(), bars_that_fit(w.height())) is None
        qtbot.wait(30)
        ticks = plot.getAxis("left")._tickLevels[0]
        assert 3 <= len(ticks) <= MAX_BARS
        vb = plot.vb
        step = abs(vb.mapViewToScene(pg.Point(0, 1)).y() - vb.mapViewToScene(pg.Point(0, 0)).y())
        line = QFontMetrics(plot.getAxis("left").style.get("tickFont") or w.font()).height()
        assert step >= line, (height, len(ticks), step, line)   # one label a row, never stacked
        # every label fits its axis: a long run id is middle-elided, never cut at the widget edge
        assert all(len(t) <= 48 for _v, t in ticks), ticks
    assert bars_that_fit(None) == MAX_BARS


def test_sla_title_counts_what_is_shown():
    from explorer.widgets.painters.sla import bar_rows
    rows, left = bar_rows(_sla(), 5)
    assert len(rows) == 5 and left == 2 + 56 - 2   # all, 2 versions, 2 runs shown; tenants cut
    # the largest grouping loses its best-attaining groups first
    assert [r[0] for r in rows] == ["all", "version", "version", "run", "run"]


def test_runs_weeks_apart_each_start_at_zero_and_are_told_apart():
    from explorer.widgets.painters.sla_windows import legend_names, run_origins
    day = 86400.0
    wins = [{"run_id": AIBRIX[0], "start_s": 0.0, "end_s": 60.0},
            {"run_id": AIBRIX[0], "start_s": 60.0, "end_s": 120.0},
            {"run_id": AIBRIX[1], "start_s": 54 * day, "end_s": 54 * day + 60},
            {"run_id": AIBRIX[1], "start_s": 54 * day + 60, "end_s": 54 * day + 120}]
    assert run_origins(wins) == {AIBRIX[0]: 0.0, AIBRIX[1]: 54 * day}
    near = [dict(w, start_s=w["start_s"] % day, end_s=w["end_s"] % day + 30) for w in wins]
    assert run_origins(near) is None              # overlapping runs share one axis
    assert legend_names(list(AIBRIX)) == {AIBRIX[0]: "0.2.1:naive_output_0.5",
                                          AIBRIX[1]: "0.3.0:naive_output_0.5"}
    assert legend_names(["a:x", "a:y"]) == {"a:x": "x", "a:y": "y"}


def test_sla_over_time_draws_each_run_from_its_start(qtbot):
    from explorer.widgets.painters.sla_windows import paint_sla_windows
    day = 86400.0
    wins = [{"run_id": r, "start_s": t0 + k * 60, "end_s": t0 + (k + 1) * 60, "attainment": a,
             "met": False} for r, t0 in zip(AIBRIX, (0.0, 54 * day)) for k, a in ((0, 0.12), (1, 0.0))]
    w = pg.PlotWidget(background="w")
    qtbot.addWidget(w)
    plot = w.getPlotItem()
    msg, _regions = paint_sla_windows(plot, {"windows": wins, "diagnosis": {}})
    assert msg is None
    xs = [list(c.getData()[0]) for c in plot.listDataItems() if c.opts.get("name")]
    assert xs == [[0.5, 1.5], [0.5, 1.5]]         # minutes from each run's first window
    names = [c.opts["name"] for c in plot.listDataItems() if c.opts.get("name")]
    assert len(set(names)) == 2
    assert "each run" in plot.getAxis("bottom").labelText
    styles = [c.opts["pen"].style() for c in plot.listDataItems() if c.opts.get("name")]
    assert len(set(styles)) == 2                  # the same values, one line over the other: seen


def test_the_versions_table_shows_every_row(window, qtbot):
    store, _req, _cases = synthetic_store()
    s = window.session
    s.store.close()
    s.store = store
    window.resize(1366, 768)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.rescan()
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    panel = on_screen(window, qtbot, "versions")
    qtbot.wait(50)
    from PySide6.QtWidgets import QSplitter
    split = panel.findChild(QSplitter)
    v, n = panel.view, panel.model.rowCount()
    assert n >= 4 and panel.plot_widget.isVisible()
    rows = sum(v.rowHeight(r) for r in range(n))
    # every row in view, or the table has half the panel (the chart the other half)
    assert v.viewport().height() >= rows or v.height() >= split.height() // 2 - 2, \
        (v.viewport().height(), rows, split.sizes())


def test_text_lengths_read_in_chinese():
    from explorer.core import i18n
    from explorer.core.names import label, unit
    old = i18n.language()
    try:
        i18n.set_language("zh_CN")
        assert unit("prompt_chars") == "字符" and "chars" not in label("prediction_chars")
        assert unit("batch_size_entropy") == "比特"
    finally:
        i18n.set_language(old)
    assert unit("prompt_chars") == "chars" and unit("batch_size_entropy") == "bits"


def test_a_sweep_that_says_nothing_draws_no_empty_chart(session, qtbot):
    """aibrix's CSVs have no hash ids and never preempt: the report's replay page drew an empty
    chart (a legend, a right axis from -0.4 to 0.4); only the sentence is left."""
    from explorer.widgets.replay import ReplayPanel
    p = ReplayPanel(session)
    qtbot.addWidget(p)
    p.show()
    flat = [{"run_id": r, "requests": 55, "eviction": "lru", "monotone": True,
             "rows": [{"num_gpu_blocks": c, "prefix_information": False, "hit_rate": None,
                       "preemptions": 0, "rejected": 0} for c in (1000, 10000)]} for r in AIBRIX]
    p.show_report({"predicted_badcases": None, "reason": "No badcase", "sweep": flat[0],
                   "sweeps": flat})
    assert not p.plot_widget.isVisible()
    assert p.status.text().count("preemptions 0 → 0") == 2
    flat[1]["rows"][0]["preemptions"] = 7            # something to draw: the chart is back
    p.show_report({"predicted_badcases": None, "reason": "No badcase", "sweep": flat[0],
                   "sweeps": flat})
    assert p.plot_widget.isVisible()
    p.jobs.cancel()
    p.jobs.wait(20000)


def test_a_run_without_model_or_lengths_is_no_nan_workload():
    """The vLLM server log's run (no model, no request lengths) read "nan, nan" as its workload
    in the Runs and Compare tabs; a token count reads with thousands separated."""
    from explorer.core.analysis.runcompare.workload import describe, run_workload
    nan = float("nan")
    w = run_workload({"run_id": "vllm_log:pod", "model": nan, "benchmark": nan, "config": None},
                     {"input_len": nan, "output_len": nan})
    assert describe(w) == "unknown workload" and "nan" not in describe(w)
    w = run_workload({"run_id": "aibrix:0.2.1:naive_output_0.5", "model": None,
                      "benchmark": "ps_experiment/naive/0.5", "config": None},
                     {"input_len": 21073.0, "output_len": 100.0})
    assert "21,073" in describe(w) and "nan" not in describe(w)


def test_the_versions_columns_fit_without_scrolling_sideways(window, qtbot):
    """At 1366x768 the Versions table's p and Flag columns were behind its scroll bar (aibrix's
    benchmark names took 180 px): benchmark, flag and metric give way, the numbers are whole."""
    store, _req, _cases = synthetic_store()
    s = window.session
    s.store.close()
    s.store = store
    window.resize(1366, 768)
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.rescan()
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    panel = on_screen(window, qtbot, "versions")
    for bench in ("ps_experiment/naive/0.5", "a/much/longer/benchmark/name/" * 3):
        rows = [[bench] + list(r[1:]) for r in panel.model.rows]
        panel.model.set_rows(rows)
        panel.fitter.refit()
        qtbot.wait(20)
        v, hh = panel.view, panel.view.horizontalHeader()
        used = sum(hh.sectionSize(c) for c in range(hh.count()) if not hh.isSectionHidden(c))
        assert used <= v.viewport().width() + 1, (used, v.viewport().width())
        for c in (2, 3, 4, 5, 6, 7):                      # versions, values, change, p: whole
            assert hh.sectionSize(c) >= v.sizeHintForColumn(c) - 1, c
        assert bench in (panel.model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) or "")


def test_the_sla_bounds_read_the_defaults_before_any_result(session, qtbot):
    """HELM's per-instance stats have no TTFT / TPOT: no request can be judged and the SLA tab
    read "TTFT <= 0.0 ms, TPOT <= 0.0 ms/token"; the bounds in force are 500 ms and 50 ms/token."""
    from explorer.core.analysis.sla import DEFAULT_THRESHOLDS
    from explorer.widgets.sla import SlaPanel
    p = SlaPanel(session)
    qtbot.addWidget(p)
    assert {m: b.value() for m, b in p.thresholds.items()} == DEFAULT_THRESHOLDS
    session.params.setdefault("sla", {})["thresholds"] = {"ttft_ms": 200.0}
    q = SlaPanel(session)
    qtbot.addWidget(q)
    assert q.thresholds["ttft_ms"].value() == 200.0 and q.thresholds["tpot_ms"].value() == 50.0


def test_one_token_reads_singular():
    from explorer.core.fmt import num
    assert num(1.0, "completion_tokens") == "1 token"
    assert num(2.0, "completion_tokens") == "2 tokens" and num(1.04, "completion_tokens") == "1.04 tokens"


def test_the_report_prints_the_sla_summary_once(tmp_path):
    """The SLA picture is the panel with its summary line; the HTML / PDF printed the line again
    above the table (aibrix + MMLU-Pro report, page 3)."""
    from PIL import Image
    from explorer.reporting.html import build_html
    from explorer.widgets.painters.sla import summary
    png = tmp_path / "sla.png"
    Image.new("RGB", (4, 4), "white").save(png)
    doc = {"meta": {}, "sla": _sla(3)}
    with_picture = build_html(doc, {"sla": png})
    without = build_html(doc, {})
    text = summary(doc["sla"])
    from explorer.core.escape import html_text
    assert with_picture.count(html_text(text)) == 0 and without.count(html_text(text)) == 1
    assert "<table class='sla'>" in with_picture and "<img" in with_picture
