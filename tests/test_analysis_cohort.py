"""The cohort: badcases of one cluster against the same-category or all-correct control."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort, cohort_frame, summarize_cohort, cluster_table
from explorer.core.errors import NoData
from explorer.core.selection import Range

RNG = np.random.default_rng(7)
N = 60
CASES = pd.DataFrame({
    "case_id": [f"e:{i}" for i in range(N)], "eval_id": "e",
    "category": RNG.choice(["algebra", "geometry", "biology"], N),
    "correct": RNG.random(N) < 0.6,
    "prompt_tokens": RNG.integers(20, 400, N), "completion_tokens": RNG.integers(5, 200, N)})
CASES["cluster"] = np.where(CASES["correct"], None,
                            np.where(CASES["category"] == "algebra", "sign errors", "other"))
# bind two thirds of the cases; the bound request's prompt_tokens differ from the case's
BOUND = CASES.iloc[: 2 * N // 3]
REQS = pd.DataFrame({"run_id": "r1", "request_id": [f"q{i}" for i in range(len(BOUND))],
                     "kv_cache_hit_rate": RNG.random(len(BOUND)),
                     "prompt_tokens": BOUND["prompt_tokens"].to_numpy() + 3})
LINKS = pd.DataFrame({"case_id": BOUND["case_id"], "run_id": "r1", "request_id": REQS["request_id"],
                      "level": RNG.integers(1, 4, len(BOUND))})


@pytest.fixture
def loaded(store):
    store.add_run("r1", engine_version="1.0")
    store.append("requests", REQS)
    store.append("cases", CASES)
    store.append("case_links", LINKS)
    return store


def test_same_category_control(loaded):
    f = cohort_frame(loaded, Cohort("sign errors"))
    bad = CASES[(~CASES.correct) & (CASES.cluster == "sign errors")]
    ctrl = CASES[CASES.correct & CASES.category.isin(bad.category.unique())]
    assert sorted(f.loc[f.grp == "bad", "case_id"]) == sorted(bad.case_id)
    assert sorted(f.loc[f.grp == "control", "case_id"]) == sorted(ctrl.case_id)
    assert (f.badcase == (f.grp == "bad")).all()
    # engine metric from the bound request, token counts: request first, else the case's own
    m = f.set_index("case_id")
    for cid in bad.case_id:
        link = LINKS[LINKS.case_id == cid]
        if len(link):
            req = REQS.set_index("request_id").loc[link.request_id.iloc[0]]
            assert m.loc[cid, "kv_cache_hit_rate"] == pytest.approx(req.kv_cache_hit_rate)
            assert m.loc[cid, "prompt_tokens"] == req.prompt_tokens
        else:
            assert np.isnan(m.loc[cid, "kv_cache_hit_rate"])
            assert m.loc[cid, "prompt_tokens"] == CASES.set_index("case_id").loc[cid, "prompt_tokens"]


def test_all_correct_control_and_summary(loaded):
    f = cohort_frame(loaded, Cohort("sign errors", "all-correct"))
    assert (f.grp == "control").sum() == CASES.correct.sum()
    s = summarize_cohort(loaded, Cohort("sign errors")).to_dict()
    bad = CASES[(~CASES.correct) & (CASES.cluster == "sign errors")]
    assert s["badcases"] == len(bad)
    assert s["share_of_badcases"] == pytest.approx(len(bad) / (~CASES.correct).sum())
    nb = bad.case_id.isin(LINKS.case_id).sum()
    assert s["bound"] == nb and s["binding_rate"] == pytest.approx(nb / len(bad))
    assert s["category"] == "algebra"
    f = cohort_frame(loaded, Cohort("sign errors"))
    lv = LINKS[LINKS.case_id.isin(f.case_id)].level.value_counts()
    assert s["link_levels"] == {str(k): int(lv.get(k, 0)) for k in (1, 2, 3)}
    assert s["note"] is None


def test_selection_narrows_both_groups(loaded):
    f = cohort_frame(loaded, Cohort(None, selection=Range("kv_cache_hit_rate", 0.5)))
    assert len(f) and (f.kv_cache_hit_rate >= 0.5).all()


def test_eval_only_says_no_trace(store):
    store.append("cases", CASES)
    s = summarize_cohort(store, Cohort("other")).to_dict()
    assert s["bound"] == 0 and "no trace" in s["note"]
    rows = cluster_table(store)
    assert [r["cluster"] for r in rows] == list(
        CASES[~CASES.correct].cluster.value_counts().sort_index().sort_values(
            ascending=False, kind="stable").index)


def test_empty_and_unknown_cluster(store):
    with pytest.raises(NoData, match="no eval cases"):
        summarize_cohort(store, Cohort())
    store.append("cases", CASES)
    with pytest.raises(NoData, match="nope"):
        summarize_cohort(store, Cohort("nope"))
    with pytest.raises(ValueError):
        Cohort(control="everything")


def test_cluster_table_counts_each_bound_badcase_once(loaded):
    """bound = the cluster's badcases with at least one link (a case linked twice counts once);
    share of all badcases; recomputed with pandas."""
    twice = LINKS[LINKS.case_id.isin(CASES.loc[~CASES.correct, "case_id"])].iloc[:2].assign(level=3)
    loaded.append("case_links", twice)
    rows = {r["cluster"]: r for r in cluster_table(loaded)}
    bad = CASES[~CASES.correct]
    for name, g in bad.groupby("cluster"):
        assert rows[name]["badcases"] == len(g)
        assert rows[name]["bound"] == g.case_id.isin(LINKS.case_id).sum()
        assert rows[name]["share"] == pytest.approx(len(g) / len(bad))
    assert set(rows) == set(bad.cluster)
