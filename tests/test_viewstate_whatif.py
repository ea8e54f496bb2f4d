"""WhatIfState (Qt-free): which treatments and outcomes a cohort frame and a causal graph allow,
the scenario value's range and default (the control group's mean, computed here with pandas),
the cases it applies to, and the run / report arguments it makes. No Qt, no DoWhy (no run)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.core.errors import InputError
from explorer.core.viewstate.whatif import NO_CASES, NO_TREATMENT, WhatIfState

GRAPH = """digraph {
  batch_size -> kv_cache_hit_rate;
  batch_size -> badcase;
  kv_cache_hit_rate -> badcase;
  queue_ms -> badcase;
  load [latent=true];
  load -> batch_size;
}"""


def frame(n=200, seed=0):
    r = np.random.default_rng(seed)
    bs = r.gamma(4, 8, n)
    kv = np.clip(0.9 - 0.012 * bs + r.normal(0, 0.15, n), 0, 1)
    y = (r.uniform(size=n) < 0.3).astype(int)
    return pd.DataFrame({"case_id": [f"e:{i}" for i in range(n)],
                         "grp": np.where(y == 1, "bad", "control"), "badcase": y,
                         "kv_cache_hit_rate": kv, "batch_size": bs,
                         "queue_ms": np.full(n, 7.0),             # constant: not a treatment
                         "tpot_ms": r.gamma(4, 10, n)})           # not in the graph


@pytest.fixture
def state():
    s = WhatIfState(GRAPH)
    return s


def test_choices_follow_the_graph_and_the_frame(state):
    f = frame()
    assert state.set_frame(f) is None
    # in the graph, observed, not an outcome, two or more distinct values
    assert sorted(state.treatments()) == ["batch_size", "kv_cache_hit_rate"]
    assert state.outcomes()[0] == "badcase" and "sla_met" not in state.outcomes()
    assert set(state.outcomes()) == {"badcase", "batch_size", "kv_cache_hit_rate"}
    assert (state.treatment, state.outcome) == ("kv_cache_hit_rate", "badcase")
    # a rate: the range is [0, 1]; the default is the control group's mean
    assert state.range == (0.0, 1.0) and state.is_rate() and state.step() == 0.01
    ctl = f.loc[f["grp"] == "control", "kv_cache_hit_rate"].mean()
    assert state.set_value == pytest.approx(ctl)
    assert state.unobserved() == ["load"]


def test_another_treatment_brings_its_range_and_default(state):
    f = frame()
    state.set_frame(f)
    state.choose_treatment("batch_size")
    assert state.range == (f["batch_size"].min(), f["batch_size"].max())
    assert not state.is_rate()
    # frame(seed=0)'s batch sizes run from 3.428 to 96.387 (printed from the frame); a slider
    # step of a hundredth of that span is 92.959 / 100 = 0.930, which is 0.9 to one decimal
    assert state.range == pytest.approx((3.428, 96.387), abs=1e-3)
    assert state.step() == 0.9
    assert state.set_value == pytest.approx(f.loc[f["grp"] == "control", "batch_size"].mean())
    with pytest.raises(ValueError):
        state.choose_treatment("queue_ms")          # constant in this frame
    with pytest.raises(ValueError):
        state.choose_outcome("sla_met")             # not in this graph
    # a new frame keeps the user's choice while it is allowed
    state.set_frame(frame(seed=1))
    assert state.treatment == "batch_size"
    state.set_frame(frame(seed=2).drop(columns="batch_size"))
    assert state.treatment == "kv_cache_hit_rate"


def test_without_a_control_group_the_default_is_the_mean_or_the_median(state):
    f = frame().drop(columns="grp")
    state.set_frame(f)
    state.choose_treatment("batch_size")
    assert state.set_value == pytest.approx(f["batch_size"].mean())
    assert state.applies_to() == ("cluster", len(f))
    g = frame()
    g.loc[g["grp"] == "control", "batch_size"] = np.nan   # no control value: all rows' median
    state.set_frame(g)
    assert state.set_value == pytest.approx(g["batch_size"].median())


@pytest.mark.parametrize("bad, why", [(None, NO_CASES), (pd.DataFrame(), NO_CASES),
                                      ("nan", NO_TREATMENT)])
def test_frames_without_a_scenario_say_why(state, bad, why):
    if isinstance(bad, str):
        bad = frame(20).assign(kv_cache_hit_rate=np.nan, batch_size=np.nan)
    assert state.set_frame(bad) == why
    assert state.frame is None and state.query() is None and state.applies_to() is None


def test_value_is_clamped_and_maps_to_the_slider(state):
    state.set_frame(frame())
    state.set_scenario_value(1.7)
    assert state.set_value == 1.0 and state.fraction() == 1.0
    state.set_scenario_value(0.25)
    assert state.fraction() == pytest.approx(0.25) and state.value_at(0.9) == pytest.approx(0.9)


def test_selected_cases_change_what_the_scenario_applies_to(state):
    f = frame()
    state.set_frame(f)
    assert state.applies_to() == ("cluster", int((f["grp"] == "bad").sum()))
    ids = frozenset(f["case_id"][:30]) | {"not-in-the-cohort"}
    state.selected_ids = ids
    assert state.applies_to() == ("selected", 30)
    assert state.report_args()["selected_case_ids"] == sorted(f["case_id"][:30])
    q = state.query()
    assert int(q.kwargs["selected"].sum()) == 30


def test_query_report_args_and_result_stay_in_step(state):
    f = frame()
    state.set_frame(f)
    state.thresholds = {"ttft_ms": 500.0}
    state.set_scenario_value(0.8)
    assert state.dirty
    q = state.query()
    assert not state.dirty and q.frame is f
    assert {k: v for k, v in q.kwargs.items() if k != "selected"} == {
        "graph_text": GRAPH, "thresholds": {"ttft_ms": 500.0}, "treatment": "kv_cache_hit_rate",
        "outcome": "badcase", "set_value": 0.8}
    assert state.report_args() == {"graph_text": GRAPH, "treatment": "kv_cache_hit_rate",
                                   "set_value": 0.8, "outcome": "badcase",
                                   "thresholds": {"ttft_ms": 500.0}}
    d = {"treatment": "kv_cache_hit_rate", "outcome": "badcase", "estimate": -0.1,
         "scenario": {"set": {"kv_cache_hit_rate": 0.8}}}
    state.take_result(d)
    assert state.report_result() is d
    state.set_scenario_value(0.5)                   # moved since: the export estimates anew
    assert state.report_result() is None


def test_a_reports_result_sets_the_choices_and_widens_the_range(state):
    state.set_frame(frame())
    state.choose_treatment("batch_size")
    lo, hi = state.range
    state.take_result({"treatment": "batch_size", "outcome": "badcase",
                       "scenario": {"set": {"batch_size": hi + 50}}})
    assert state.range == (lo, hi + 50) and state.set_value == hi + 50


def test_an_invalid_graph_is_refused_and_the_old_one_kept(state):
    state.set_frame(frame())
    with pytest.raises(InputError):
        state.set_graph("digraph { kv_cach -> badcase; }")
    assert state.graph_text == GRAPH and "batch_size" in state.graph.nodes
    state.set_graph("digraph { kv_cache_hit_rate -> badcase; }")
    assert state.treatments() == ["kv_cache_hit_rate"]
    with pytest.raises(ValueError):
        state.choose_treatment("batch_size")        # no longer in the graph


def test_scale_row(state):
    f = frame()
    state.set_frame(f)
    state.scale_metric, state.scale_pct = "tpot_ms", -20
    q = state.scale_query()
    assert q.metric == "tpot_ms" and q.factor == pytest.approx(0.8) and q.frame is f
    state.scale_metric = "ttft_ms"                  # not in this frame
    assert state.scale_query() is None
    state.scale_pct = -95
    with pytest.raises(ValueError):
        state.scale_query()


def test_typed_payloads_name_every_key_the_results_carry():
    """WhatIfSection / ScaleDict (what the panel and the report read) list exactly the keys
    that WhatIfResult.to_dict() / ScaleResult.to_dict() write."""
    import dataclasses
    import typing

    from explorer.core.analysis.whatif.refute import Refutation
    from explorer.core.analysis.whatif.scale import ScaleDict, ScaleResult
    from explorer.core.analysis.whatif.scenario import (RefutationDict, ScenarioDict,
                                                        WhatIfResult, WhatIfSection)

    def dummy(cls, **kw):
        vals = {f.name: 0.0 for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        return cls(**(vals | kw))
    ref = dummy(Refutation, name="placebo_treatment_refuter", label="Placebo", verdict="passes",
                why="")
    w = dummy(WhatIfResult, treatment="kv_cache_hit_rate", outcome="badcase", common_causes=(),
              refutations=(ref,), assumptions=(), method="", outcome_kind="binary").to_dict()
    assert set(w) == set(typing.get_type_hints(WhatIfSection))
    assert set(w["scenario"]) == set(typing.get_type_hints(ScenarioDict))
    assert set(w["refutations"][0]) == set(typing.get_type_hints(RefutationDict))
    sc = dummy(ScaleResult, metric="queue_ms", factor=0.8, thresholds={}, slopes={},
               common_causes={}, assumptions=()).to_dict()
    assert set(sc) == set(typing.get_type_hints(ScaleDict))
