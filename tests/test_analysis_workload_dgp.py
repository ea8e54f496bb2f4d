"""Issue 35 on a small sample: one dataset of each kind of tests/dgp.py through the product, its
truth known (bench/workload_dgp.py runs 30 per kind at full size). Workload and Simpson data
name no module; planted effects name theirs and no other; versions compare like with like; the
what-if's interval covers the truth (0 when the hit rate does nothing)."""
import numpy as np
import pytest
from scipy import stats

from tests.dgp import score

NULL = ["category_confound", "long_prompts_weak", "long_prompts_strong", "simpson_evals",
        "simpson_versions"]
PLANTED = ["hidden_version", "cluster_noise", "realistic", "stale_cache"]
SMALL = {"realistic": 12000, "hidden_version": 6000, "cluster_noise": 4000}


@pytest.mark.parametrize("kind", NULL)
def test_workload_and_simpson_data_name_no_module(kind):
    r = score(kind, 1, SMALL.get(kind, 3000))
    assert not r["named"], r["narrative"]


def test_long_prompts_are_said_to_be_the_workload():
    r = score("long_prompts_strong", 2, 3000)
    assert r["narrative"].startswith("The badcases are the long prompts (prompt tokens "), \
        r["narrative"]
    assert "a property of what they were asked, not of the engine" in r["narrative"]


@pytest.mark.parametrize("kind", PLANTED)
def test_planted_effects_are_found_without_extra_modules(kind):
    r = score(kind, 1, SMALL.get(kind, 3000))
    assert r["found"] and not r["wrong"], r["narrative"]
    for cl in ("B", "C"):
        assert not r.get(f"named_{cl}", False), cl   # the noise clusters beside a planted one


def test_versions_compare_like_with_like():
    r = score("version_workload", 1, 3000)      # 2.5x longer prompts, the same engine
    assert not r["named"], r["flagged"]
    r = score("version_regression", 1, 3000)    # fewer prefix blocks kept, no benchmark column
    assert r["found"] and not r["wrong"], r["flagged"]


@pytest.mark.parametrize("kind", ["whatif_null", "whatif_real"])
def test_whatif_interval_covers_the_truth(kind):
    r = score(kind, 1, 3000)
    assert r["covers"], r
    if kind == "whatif_null":
        assert r["truth"] == 0.0


def test_van_elteren_matches_scipy_on_one_stratum_and_by_hand_on_two():
    """One cell: van Elteren is the Mann-Whitney z test (scipy, no continuity correction). Two
    cells: the weighted rank-sum statistic recomputed from scipy's rankdata."""
    from explorer.core.analysis.workload import van_elteren
    r = np.random.default_rng(3)
    x = np.round(r.normal(0, 1, 300), 1)    # ties
    bad = r.random(300) < 0.3
    x[bad] += 0.3
    got = van_elteren(x, bad, np.zeros(300, int))
    want = stats.mannwhitneyu(x[bad], x[~bad], use_continuity=False, method="asymptotic")
    assert got["p_value"] == pytest.approx(want.pvalue, rel=1e-9)
    cell = (r.random(300) < 0.5).astype(int)
    num = var = 0.0
    for c in (0, 1):
        m = cell == c
        rk = stats.rankdata(x[m])
        nb, n = bad[m].sum(), m.sum()
        _, t = np.unique(x[m], return_counts=True)
        w = 1 / (n + 1)
        num += w * (rk[bad[m]].sum() - nb * (n + 1) / 2)
        var += w ** 2 * nb * (n - nb) / 12 * ((n + 1) - (t ** 3 - t).sum() / (n * (n - 1)))
    got = van_elteren(x, bad, cell)
    assert got["z"] == pytest.approx(num / np.sqrt(var), rel=1e-9)
    diff = np.mean([x[(cell == c) & bad].mean() - x[(cell == c) & ~bad].mean()
                    for c in cell[bad]])
    assert got["diff"] == pytest.approx(diff, rel=1e-9)


def test_comparison_rows_carry_the_adjusted_difference_beside_the_raw_one():
    """Hit rate falls with the prompt length, the badcases are the long prompts: the raw
    difference is large, at equal prompt length (regression adjustment + cells) it is ~0; the
    report's rows carry both (keys of resources/report.schema.json)."""
    from explorer.core.analysis import Cohort
    from explorer.core.sections import run_all
    from tests.dgp import store_of, long_prompts
    df, _ = long_prompts(1.8)(np.random.default_rng(7), 3000)
    s = store_of(df)
    try:
        res = run_all(s, Cohort("A"), {"sections": ["cohort", "comparison"]})
    finally:
        s.close()
    row = res["comparison"].row("kv_cache_hit_rate").to_dict()
    assert row["p_adjusted"] < 1e-6 and row["diff_pct"] < -5
    assert row["adjusted_p_adjusted"] > 0.05 and abs(row["adjusted_diff_pct"]) < 2
    assert row["adjusted_n_bad"] > 0.9 * row["n_bad"]
    assert res["comparison"].row("prompt_tokens").adjusted_p_value is None   # the workload
    assert res["comparison"].adjusted_for == ("prompt_tokens", "completion_tokens")


def test_van_elteren_over_many_cells_matches_a_per_cell_scipy_recomputation():
    """Many cells with sparse, non-contiguous codes, ties, and cells holding one group only
    (left out): the weighted rank-sum statistic, its tie-corrected variance, the counts and the
    badcase-weighted difference recomputed cell by cell from scipy's rankdata."""
    from explorer.core.analysis.workload import van_elteren
    r = np.random.default_rng(11)
    n = 5000
    x = np.round(r.normal(0, 1, n), 1)
    bad = r.random(n) < 0.2
    x[bad] += 0.2
    cell = r.integers(0, 60, n) * 13 - 100
    cell[bad & (cell < 0)] = 10_000          # a cell of badcases only
    cell[~bad & (cell > 600)] = -10_000      # one of controls only
    num = var = 0.0
    nbs = ncs = 0
    diffs = []
    for c in np.unique(cell):
        m = cell == c
        nb, nn = int(bad[m].sum()), int(m.sum())
        if nb in (0, nn):
            continue
        rk = stats.rankdata(x[m])
        _, t = np.unique(x[m], return_counts=True)
        w = 1 / (nn + 1)
        num += w * (rk[bad[m]].sum() - nb * (nn + 1) / 2)
        var += w ** 2 * nb * (nn - nb) / 12 * ((nn + 1) - (t ** 3 - t).sum() / (nn * (nn - 1)))
        nbs, ncs = nbs + nb, ncs + nn - nb
        diffs += [x[m & bad].mean() - x[m & ~bad].mean()] * nb
    got = van_elteren(x, bad, cell)
    assert (got["n_bad"], got["n_control"]) == (nbs, ncs)
    assert nbs < bad.sum() and ncs < (~bad).sum()     # the one-group cells were left out
    assert got["z"] == pytest.approx(num / np.sqrt(var), rel=1e-9)
    assert got["p_value"] == pytest.approx(2 * stats.norm.sf(abs(num / np.sqrt(var))), rel=1e-9)
    assert got["diff"] == pytest.approx(np.mean(diffs), rel=1e-9)
