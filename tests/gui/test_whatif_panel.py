"""What-if panel: the frame in -> a run in the panel's worker -> the result painted; the
slider, the graph editor (validation with the line, kept with the session), Cancel, and a
report's ready result painted without rerunning."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import whatif as W

GRAPH = """digraph {
  batch_size -> kv_cache_hit_rate;
  batch_size -> badcase;
  kv_cache_hit_rate -> badcase;
}"""


def cohort_frame(n=1200, seed=0):
    """Cohort-like frame: badcases more likely at a low KV-cache hit rate and a large batch."""
    r = np.random.default_rng(seed)
    bs = r.gamma(4, 8, n)
    kv = np.clip(0.9 - 0.012 * bs + r.normal(0, 0.15, n), 0, 1)
    p = 1 / (1 + np.exp(-(-0.5 - 3 * (kv - 0.5) + 0.03 * (bs - 32))))
    y = (r.uniform(size=n) < p).astype(int)
    return pd.DataFrame({"case_id": [f"e:{i}" for i in range(n)],
                         "grp": np.where(y == 1, "bad", "control"), "badcase": y,
                         "kv_cache_hit_rate": kv, "batch_size": bs})


@pytest.fixture
def panel(session, qtbot):
    from explorer.widgets.whatif import WhatIfPanel
    p = WhatIfPanel(session)
    qtbot.addWidget(p)
    p.resize(1100, 640)
    yield p
    p.jobs.cancel()
    p.jobs.wait(30000)


def _finish(panel, qtbot):
    qtbot.wait(1)   # let a run scheduled with a zero-time timer start
    qtbot.waitUntil(lambda: panel.jobs.pending() == 0, timeout=60000)


def test_frame_in_runs_and_paints_the_same_numbers_as_the_core(panel, session, qtbot):
    panel.editor.setPlainText(GRAPH)
    assert panel.apply_graph(save=False)
    panel.show()
    frame = cohort_frame()
    session.publish({"frame": frame})      # model -> UI: runs by itself
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    _finish(panel, qtbot)
    d = panel.result
    assert d is not None and d["treatment"] == "kv_cache_hit_rate" and d["outcome"] == "badcase"
    set_value = d["scenario"]["set"]["kv_cache_hit_rate"]
    ctl = frame.loc[frame["grp"] == "control", "kv_cache_hit_rate"].mean()
    assert set_value == pytest.approx(ctl, abs=1e-3)   # default: the control group's mean
    ref = W.run_whatif(frame, set_value=set_value, graph_text=GRAPH).to_dict()
    assert d["estimate"] == pytest.approx(ref["estimate"])
    assert d["scenario"]["predicted_outcome"] == pytest.approx(ref["scenario"]["predicted_outcome"])
    assert panel.table.rowCount() == 3
    verdicts = {panel.table.item(i, 2).text() for i in range(3)}
    assert verdicts <= {"passes", "raises doubt"}
    assert "error rate of the" in panel.headline.text() and "observed" in panel.headline.text()
    assert "adjusted for batch size" in panel.effect.text()
    assert "no interference" in panel.assumptions.text()
    # the bus's "whatif" is a report's finished section: the panel's own run does not write it
    assert "whatif" not in session.data and panel.report_result() is d
    # the adjustment set is outlined in the drawing; every graph node is drawn
    assert panel.scene.items() and len([i for i in panel.scene.items() if i.data(0)]) == 3


def test_slider_sets_the_scenario_value(panel, session, qtbot):
    panel.editor.setPlainText(GRAPH)
    panel.apply_graph(save=False)
    panel.show()
    session.publish({"frame": cohort_frame(seed=1)})
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    _finish(panel, qtbot)
    panel.slider.setValue(900)                          # UI -> model: 0.9 on [0, 1]
    assert panel.set_box.value() == pytest.approx(0.9)
    qtbot.waitUntil(lambda: panel.result["scenario"]["set"]["kv_cache_hit_rate"]
                    == pytest.approx(0.9), timeout=60000)
    _finish(panel, qtbot)
    assert panel.result["estimate"] < 0               # a higher hit rate, fewer errors
    args = panel.report_args()
    assert args["set_value"] == pytest.approx(0.9) and args["graph_text"] == GRAPH
    assert (args["treatment"], args["outcome"]) == ("kv_cache_hit_rate", "badcase")
    # the finished result of exactly these arguments goes to an exported report as it is ...
    assert panel.report_result() is panel.result
    # ... and no longer once the user moved the slider again (the export estimates anew)
    panel.slider.setValue(500)
    panel.slider.sliderReleased.emit()
    assert panel.report_result() is None


def test_selection_changes_the_cases_the_scenario_applies_to(panel, session, qtbot):
    panel.editor.setPlainText(GRAPH)
    panel.apply_graph(save=False)
    frame = cohort_frame(seed=2)
    session.publish({"frame": frame})
    session.selected_cases = frozenset(frame["case_id"][:100])
    session.selectedCasesChanged.emit(session.selected_cases)
    assert "100 selected cases" in panel.applies.text()
    panel.show()                                        # shown with new inputs: runs
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    _finish(panel, qtbot)
    assert panel.result["n_selected"] == 100
    assert "100 selected cases" in panel.applies.text()
    # an exported report applies the scenario to the same cases, and may take this result
    assert panel.report_args()["selected_case_ids"] == sorted(frame["case_id"][:100])
    assert panel.report_result() is panel.result


def test_graph_editor_says_where_it_is_wrong_and_keeps_the_graph(panel, session, qtbot):
    panel.editor.setPlainText("digraph {\n  batch_size -> kv_cache_hit_rate;\n  kv_cach -> badcase;\n}")
    assert not panel.validate()
    assert panel.graph_status.text().startswith("line 3:")
    assert "kv_cach" in panel.graph_status.text() and not panel.apply_button.isEnabled()
    assert len(panel.editor.extraSelections()) == 1
    panel.editor.setPlainText(GRAPH)
    assert panel.validate() and panel.apply_button.isEnabled()
    panel.apply_button.click()   # the button, as a user applies it: the graph is saved too
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=10000)
    assert session.store.get_setting("causal_graph") == GRAPH
    assert set(panel.graph.nodes) == {"batch_size", "kv_cache_hit_rate", "badcase"}
    # a session opened later brings its graph back into the editor
    from explorer.widgets.whatif import WhatIfPanel
    other = WhatIfPanel(session)
    qtbot.addWidget(other)
    session.storeChanged.emit()
    qtbot.waitUntil(lambda: other.graph_text == GRAPH, timeout=10000)
    assert other.editor.toPlainText() == GRAPH


def _start_run(panel, session, seed):
    """The test graph applied, a cohort frame in, the panel shown and a run started."""
    panel.editor.setPlainText(GRAPH)
    panel.apply_graph(save=False)
    session.publish({"frame": cohort_frame(seed=seed)})
    panel.show()
    panel.run()


def test_cancel_drops_the_run(panel, session, qtbot):
    _start_run(panel, session, seed=3)
    panel.cancel_button.click()
    _finish(panel, qtbot)
    assert panel.result is None
    assert panel.headline.text() == "Cancelled."
    assert not panel.progress.isVisible() and not panel.cancel_button.isEnabled()


def test_a_new_cohort_cancels_the_old_cohorts_run(panel, session, qtbot):
    # the old cohort's estimate is stale: it must not keep a core busy while the new cohort's
    # analysis runs (it reruns when the new frame arrives)
    _start_run(panel, session, seed=5)
    assert panel.jobs.pending() > 0
    session.cohortChanged.emit()
    assert not panel._run_timer().isActive()
    _finish(panel, qtbot)
    assert panel.result is None
    assert "cohort changed" in panel.headline.text()
    # the note belongs to that cancel only: a run replaced by a newer one says nothing of it
    # and the newer run's status stays
    shown = []
    status = panel._status
    panel._status = lambda text, *a, **k: (shown.append(text), status(text, *a, **k))
    panel.run()
    panel.run()
    _finish(panel, qtbot)
    assert panel.result is not None
    assert not [t for t in shown if "cohort changed" in t or t == "Cancelled."], shown


def test_a_reports_result_is_painted_without_rerunning(panel, session, qtbot):
    frame = cohort_frame(seed=4)
    d = W.run_whatif(frame, set_value=0.67, graph_text=GRAPH, refute=False).to_dict()
    panel.show()
    session.publish({"whatif": d, "frame": frame})
    assert panel.jobs.pending() == 0                  # nothing recomputed
    assert panel.message() is None and panel.result["estimate"] == d["estimate"]
    assert "0.67" in panel.headline.text()
    session.publish({"whatif": {"status": "no_data", "reason": "not requested"}})
    assert panel.headline.text() == "not requested" and panel.table.rowCount() == 0


def test_unbound_cohort_says_why(panel, session):
    frame = cohort_frame(n=20).assign(kv_cache_hit_rate=np.nan, batch_size=np.nan)
    panel.show_result(frame)
    assert "nothing to intervene on" in panel.message()


def test_importing_the_panel_does_not_import_dowhy():
    code = ("import sys, explorer.widgets.whatif\n"
            "print(any(m.split('.')[0] == 'dowhy' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"


def test_sla_scaling_row(panel, session, qtbot):
    """queue_ms 20 % lower: the panel's line equals whatif_scale on the same frame."""
    r = np.random.default_rng(5)
    frame = cohort_frame(n=800, seed=5)
    frame["queue_ms"] = r.exponential(300, len(frame))
    frame["ttft_ms"] = frame["queue_ms"] + r.normal(100, 20, len(frame))
    frame["tpot_ms"] = r.gamma(4, 10, len(frame))
    g = GRAPH.replace("}", " queue_ms -> ttft_ms; ttft_ms -> sla_met; tpot_ms -> sla_met; }")
    panel.editor.setPlainText(g)
    assert panel.apply_graph(save=False)
    session.publish({"sla": {"thresholds": {"ttft_ms": 400.0, "tpot_ms": 60.0}}})
    session.publish({"frame": frame})
    assert panel.scale_metric.currentData() == "queue_ms" and panel.scale_pct.value() == -20
    panel.show()                                        # runs the what-if and the SLA line
    qtbot.waitUntil(lambda: panel.scale is not None and panel.scale["metric"] == "queue_ms",
                    timeout=60000)
    _finish(panel, qtbot)
    ref = W.whatif_scale(frame, "queue_ms", 0.8, thresholds={"ttft_ms": 400.0, "tpot_ms": 60.0},
                         graph_text=g)
    assert panel.scale["attainment_after"] == pytest.approx(ref.attainment_after)
    assert panel.scale_text.text() == ref.text
    assert ref.attainment_after > ref.attainment_before
