"""Every panel accepts an empty and an all-NaN input without error (Orange3's habit): the panel
either paints or says why not, and never shows "Could not draw" (a painting exception)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from explorer.core.store import LoadReport
from explorer.session import Failure

NAN = math.nan
FRAME_COLS = ["case_id", "grp", "badcase", "category", "cluster", "run_id", "request_id", "level",
              "kv_cache_hit_rate", "num_preemptions", "tpot_ms", "batch_size", "ttft_ms",
              "queue_ms", "e2e_ms", "prompt_tokens", "completion_tokens", "correct"]
CASE_COLS = ["case_id", "prompt", "prediction", "correct", "cluster", "category", "run_id",
             "request_id", "level"]


def _nan_frame(cols):
    return pd.DataFrame([{c: NAN for c in cols} | {"case_id": "e:1", "grp": "bad"},
                         {c: NAN for c in cols} | {"case_id": "e:2", "grp": "control"}])


SAMPLES = {
    "cohort": ({}, {"cluster": None, "category": None, "badcases": NAN, "share_of_badcases": NAN,
                    "bound": NAN, "binding_rate": NAN, "control": None, "link_levels": {"1": NAN}}),
    "inputs": ([], [LoadReport(path="x.json", rows_loaded=NAN, rows_skipped=NAN)]),
    "replay_runs": ([], [{"run_id": "r", "label": None, "n": NAN}]),
    "clusters": ([], [{"name": "x", "badcases": NAN, "share": NAN, "bound": NAN}]),
    "comparison": ([], [{"metric": "tpot_ms", "bad_mean": NAN, "control_mean": NAN, "diff_pct": NAN,
                         "p_value": NAN, "p_adjusted": NAN, "cohens_d": NAN, "n_bad": NAN,
                         "n_control": NAN}]),
    "frame": (pd.DataFrame(columns=FRAME_COLS), _nan_frame(FRAME_COLS)),
    "tree": ({"nodes": []}, {"max_depth": 3, "baseline_error_rate": NAN, "nodes": [
        {"id": 0, "parent": None, "feature": "tpot_ms", "threshold": NAN, "side": None, "n": NAN,
         "error_rate": NAN, "is_leaf": False},
        {"id": 1, "parent": 0, "feature": None, "threshold": NAN, "side": "le", "n": NAN,
         "error_rate": NAN, "is_leaf": True}]}),
    "heatmap": ({}, {"x_metric": "tpot_ms", "y_metric": "batch_size_entropy", "value_metric": "queue_ms",
                     "x_edges": [0, 1, 2], "y_edges": [0, 1], "values": [[NAN, NAN]]}),
    "versions": ({"values": [], "changes": []},
                 {"values": [{"engine_version": "a", "metric": "tpot_ms", "value": NAN, "n": NAN}],
                  "changes": [{"metric": "tpot_ms", "from_version": "a", "to_version": "b",
                               "from_value": NAN, "to_value": NAN, "change_pct": NAN,
                               "p_value": NAN, "regression": False}]}),
    "sla": ({}, {"thresholds": {"ttft_ms": NAN}, "attainment": {"share": NAN, "n": NAN},
                 "by": {"version": [{"key": "a", "share": NAN, "n": NAN}]}}),
    "conclusion": ({}, {"modules": [], "narrative": None, "suggestions": [
        {"priority": NAN, "text": None, "flags": []}]}),
    "runs": ([], [{"run_id": "r", "label": None, "engine": None, "engine_version": None,
                   "completed": NAN, "failed": NAN, "no_success": False, "flags": [],
                   "published": [{"metric": "ttft_ms", "stat": "mean", "value": NAN, "unit": "ms"}],
                   "recomputed": [{"metric": "ttft_ms", "stat": "mean", "unit": "ms",
                                   "published": NAN, "recomputed": NAN, "diff_pct": NAN}]}]),
    "compare": ({}, {"runs": [{"run_id": "r", "label": None, "engine_version": None}],
                     "workloads": [{"id": "w1", "description": "", "runs": ["r"]}],
                     "pairs": [{"a": "r", "b": "s", "kind": "runs", "same_workload": True,
                                "workload_a": "", "workload_b": "", "notes": [],
                                "differs_in": [], "items": None,
                                "metrics": [{"metric": "ttft_ms", "stat": "mean", "a": NAN,
                                             "b": NAN, "diff_pct": NAN, "ci_low": NAN,
                                             "ci_high": NAN, "p_value": NAN,
                                             "beyond_noise": None, "regression": None}]}],
                     "sweeps": [{"setting": "request_rate", "name": "x", "points": [
                         {"run_id": "r", "label": None, "x": NAN, "values": {
                             "ttft_ms median": NAN, "output_throughput value": NAN,
                             "e2e_ms median": NAN}}],
                         "pareto": {"x_metric": "output_throughput value",
                                    "y_metric": "e2e_ms median", "front": []}}]}),
    "engine": ({}, {"runs": [{"run_id": "x", "server": {"engines": NAN, "peak_running": NAN},
                              "engines": [{"engine": None, "samples": NAN, "running_mean": NAN,
                                           "series": {"ts_s": [NAN, NAN], "running": [NAN, NAN],
                                                      "kv_usage_gpu": [NAN, NAN]}}]}],
                    "request_context": {"bound_requests": NAN, "with_context": NAN}}),
    "cases": (pd.DataFrame(columns=CASE_COLS),
              _nan_frame(CASE_COLS)[CASE_COLS].astype(object).assign(correct=pd.NA, level=pd.NA)),
}


def _panel_classes():
    from explorer.widgets.base import Panel
    from explorer.widgets.panels import PANELS
    out = []
    for name, cls, _ in PANELS:
        if issubclass(cls, Panel):
            out.append(pytest.param(cls, id=name))
    return out


@pytest.mark.parametrize("kind", ["empty", "all-nan", "failure"])
@pytest.mark.parametrize("cls", _panel_classes())
def test_panel_accepts_empty_and_nan(cls, kind, session, qtbot):
    panel = cls(session)
    qtbot.addWidget(panel)
    panel.resize(600, 400)
    panel.show()
    assert cls.key in SAMPLES, f"no sample input for {cls.__name__} ({cls.key})"
    empty, nan = SAMPLES[cls.key]
    value = {"empty": empty, "all-nan": nan,
             "failure": Failure("no case of the cohort is bound", nodata=True)}[kind]
    panel.show_result(value)
    panel.repaint()
    msg = panel.message()
    assert msg is None or not msg.startswith("Could not draw"), msg
    if kind == "failure":
        assert msg == "no case of the cohort is bound"
    if kind == "empty" and cls.key not in ("cohort", "conclusion"):
        assert msg, f"{cls.__name__} shows an empty panel without saying why"


def test_case_caption_counts_the_whole_cohort_when_the_list_is_capped(session, qtbot):
    """The case list holds at most CASE_LIMIT rows; its caption still gives the cohort's own
    counts and says how many rows are listed."""
    import pandas as pd

    from explorer.widgets.cases import CasesPanel
    n, bad, listed = 6200, 3275, 5000
    frame = pd.DataFrame({"case_id": [f"c{i}" for i in range(n)],
                          "badcase": [1] * bad + [0] * (n - bad)})
    session.publish({"frame": frame})
    rows = pd.DataFrame({"case_id": frame["case_id"][:listed], "prompt": "q", "prediction": "a",
                         "correct": [False] * bad + [True] * (listed - bad), "cluster": None,
                         "category": "x", "run_id": None, "request_id": None, "level": None})
    panel = CasesPanel(session)
    qtbot.addWidget(panel)
    panel.show_result(rows)
    assert panel.caption.text() == ("6,200 cases in the cohort: 3,275 badcases, 2,925 "
                                    "control (the first 5,000 listed)")
