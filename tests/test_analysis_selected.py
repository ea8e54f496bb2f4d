"""A selection answered in every section: recomputed with numpy / scipy from the raw frame, and
the heatmap cells it occupies checked against the cells' own SQL predicates."""
from __future__ import annotations

import pytest
from scipy import stats

from explorer.core.analysis import Cohort, cohort_frame, compute_heatmap, heatmap_cell_predicate
from explorer.core.analysis.selected import analyse_selection
from explorer.core.selection import And, InSet, Range, select_cases


@pytest.fixture
def synth():
    from tests.gui.conftest import synthetic_store
    store, req, cases = synthetic_store()
    yield store, req, cases
    store.close()


def test_selection_against_the_rest_the_control_and_the_sla(synth):
    store, req, cases = synth
    cohort = Cohort("计算错误")
    frame = cohort_frame(store, cohort)
    picked = frame["num_preemptions"] >= 1
    ids = set(frame.loc[picked, "case_id"])
    hm = compute_heatmap(store, cohort, frame=frame)
    out = analyse_selection(store, cohort, frame, ids, {"heatmap": hm, "cohort": None})
    bad = frame["badcase"] == 1
    assert (out["n"], out["n_bad"], out["n_control"]) == (
        int(picked.sum()), int((picked & bad).sum()), int((picked & ~bad).sum()))

    kv = frame["kv_cache_hit_rate"]
    rest = {r["metric"]: r for r in out["vs_rest"]}["kv_cache_hit_rate"]
    assert rest["bad_mean"] == pytest.approx(kv[picked].mean())
    assert rest["control_mean"] == pytest.approx(kv[~picked].mean())
    assert rest["p_value"] == pytest.approx(
        stats.mannwhitneyu(kv[picked], kv[~picked], alternative="two-sided").pvalue)
    ctl = {r["metric"]: r for r in out["vs_control"]}["kv_cache_hit_rate"]
    assert ctl["bad_mean"] == pytest.approx(kv[picked & bad].mean())
    assert ctl["control_mean"] == pytest.approx(kv[~bad].mean())
    assert (ctl["n_bad"], ctl["n_control"]) == (int((picked & bad).sum()), int((~bad).sum()))

    # SLA of the selected requests (TTFT <= 500 ms, TPOT <= 50 ms; none errored here)
    sel = frame[picked]
    met = int(((sel["ttft_ms"] <= 500) & (sel["tpot_ms"] <= 50)).sum())
    assert out["sla"]["judged"] == len(sel) and out["sla"]["met"] == met
    assert out["sla"]["attainment"] == pytest.approx(met / len(sel))
    whole = int(((frame["ttft_ms"] <= 500) & (frame["tpot_ms"] <= 50)).sum())
    assert out["sla"]["cohort_attainment"] == pytest.approx(whole / len(frame))

    # versions: the selected cases per release of their request
    by = sel.groupby("engine_version").size().to_dict()
    assert {v["engine_version"]: v["n"] for v in out["versions"]} == by

    # heatmap: each occupied cell holds exactly the selected cases its own predicate selects
    cells = out["heatmap"]["cells"]
    assert cells and sum(c[2] for c in cells) == len(sel)
    for ix, iy, n, nb in cells:
        in_cell = set(select_cases(store, heatmap_cell_predicate(hm, ix, iy))) & ids
        assert len(in_cell) == n
        assert nb == int(frame[frame["case_id"].isin(in_cell)]["badcase"].sum())

    # the conclusion reads the selected badcases' evidence
    assert out["conclusion"] and out["conclusion"]["narrative"]


def test_selection_of_only_control_cases_says_why_there_is_no_comparison(synth):
    store, _, _ = synth
    cohort = Cohort("计算错误")
    frame = cohort_frame(store, cohort)
    ids = set(frame.loc[frame["badcase"] == 0, "case_id"][:20])
    out = analyse_selection(store, cohort, frame, ids)
    assert out["n"] == 20 and out["n_bad"] == 0
    assert out["vs_control"] is None and out["vs_control_reason"] == "the selection holds no badcase"
    assert out["conclusion"] is None
    assert out["vs_rest"] is not None  # 20 control cases against the rest still compare


def test_request_level_cells_match_the_cell_predicates(synth):
    store, _, _ = synth
    cohort = Cohort("format error")
    frame = cohort_frame(store, cohort)
    hm = compute_heatmap(store, cohort, {"level": "request", "x_metric": "tpot_ms",
                                         "y_metric": "queue_ms", "value_metric": "e2e_ms"}, frame=frame)
    ids = set(frame["case_id"][frame["badcase"] == 1])
    out = analyse_selection(store, cohort, frame, ids, {"heatmap": hm})
    assert sum(c[2] for c in out["heatmap"]["cells"]) == len(ids)
    for ix, iy, n, _ in out["heatmap"]["cells"]:
        pred = heatmap_cell_predicate(hm, ix, iy)
        assert len(set(select_cases(store, pred)) & ids) == n
    # a set of cases and a range are selections like any other
    assert select_cases(store, And(InSet("case_id", tuple(sorted(ids))[:3]), Range("tpot_ms", 0, None)))
