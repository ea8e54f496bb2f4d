"""The conclusion names a module only when its evidence survives the family's tests:
Benjamini-Hochberg over every test weighed, a minimum support and an effect-size floor; the
tree's finding rests on held-out cases."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort
from explorer.core.sections import run_all
from explorer.core.analysis.conclusion import conclude
from explorer.core.analysis.evidence import MIN_SUPPORT, collect
from explorer.core.analysis.results import (CohortSummary, Comparison, MetricRow)

SECTIONS = {"sections": ["cohort", "comparison", "tree", "versions", "conclusion"]}


def _row(metric, p, d, nb, nc=2000, bad=0.1, ctl=0.3):
    return MetricRow(metric=metric, kind="numeric", unit="", bad_mean=bad, control_mean=ctl,
                     diff_pct=(bad - ctl) / ctl * 100, p_value=p, p_adjusted=p, cohens_d=d,
                     n_bad=nb, n_control=nc)


def _cohort(bound):
    return CohortSummary(cluster="k", category="m", badcases=bound, share_of_badcases=1.0,
                         bound=bound, binding_rate=1.0, control="same-category",
                         control_cases=2000, control_bound=2000, link_levels={"1": bound})


def test_tiny_but_significant_difference_names_no_module():
    """At millions of requests p is tiny for any difference: below the effect floor (|Hedges'
    g| < 0.2) no module is named, and the narrative states the floor."""
    res = {"cohort": _cohort(50_000),
           "comparison": Comparison(rows=(_row("kv_cache_hit_rate", 1e-30, -0.05, 50_000),))}
    c = conclude(res)
    assert c.modules == () and "|Hedges' g| >= 0.2" in c.narrative
    assert "no engine module is named" in c.narrative
    res["comparison"] = Comparison(rows=(_row("kv_cache_hit_rate", 1e-30, -0.5, 50_000),))
    assert "prefix caching" in conclude(res).modules


def test_fewer_than_min_support_badcases_name_no_module():
    rows = (_row("kv_cache_hit_rate", 1e-6, -2.0, MIN_SUPPORT - 2),)
    c = conclude({"cohort": _cohort(MIN_SUPPORT - 2), "comparison": Comparison(rows=rows)})
    assert c.modules == ()
    assert f"Only {MIN_SUPPORT - 2} badcases are bound" in c.narrative
    rows = (_row("kv_cache_hit_rate", 1e-6, -2.0, MIN_SUPPORT),)
    assert conclude({"cohort": _cohort(MIN_SUPPORT), "comparison": Comparison(rows=rows)}).modules


def _store(seed, planted):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from conclusion_null import dataset
    return dataset(seed, planted)


@pytest.fixture(scope="module")
def planted():
    s = _store(100_001, True)
    yield run_all(s, Cohort("A"), SECTIONS)
    s.close()


def test_one_benjamini_hochberg_family_over_everything_weighed(planted):
    """The family-adjusted p of each fired rule is BH over the comparison rows, the tree's
    held-out leaf and every version change together (recomputed with statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    # a row adjusted for the workload weighs its test at equal workload (issue 35)
    own = [r.adjusted_p_value if r.adjusted_test else r.p_value
           for r in planted["comparison"].rows if r.p_value is not None
           and (r.adjusted_test is None or r.adjusted_p_value is not None)]
    own.append(planted["tree"].holdout["p_value"])
    ps = own + [c["p_value"] for c in planted["versions"].changes if c["p_value"] is not None]
    assert len(ps) > len(own) and len(ps) == len(collect(planted)) == planted["conclusion"].tests
    q_all = dict(zip(ps, multipletests(ps, method="fdr_bh")[1]))
    q_own = dict(zip(own, multipletests(own, method="fdr_bh")[1]))
    row = planted["comparison"].row("kv_cache_hit_rate")
    ev = {e["rule"]: e for e in planted["conclusion"].evidence}
    want = max(q_all[row.adjusted_p_value], q_own[row.adjusted_p_value])
    assert ev["low_prefix_hits"]["p_adjusted"] == pytest.approx(want, rel=1e-12)
    assert "prefix caching" in planted["conclusion"].modules


def test_tree_finding_is_counted_on_held_out_cases(planted):
    """The holdout's leaf error rate, lift and one-sided Fisher p follow from its held-out
    counts (scipy), and its conditions describe cases of the data."""
    from scipy import stats

    h = planted["tree"].holdout
    assert h["fit_n"] + h["test_n"] == planted["tree"].n
    rest_n = h["test_n"] - h["n"]
    rest_bad = round(h["baseline_error_rate"] * h["test_n"]) - h["n_bad"]
    assert h["error_rate"] == pytest.approx(h["n_bad"] / h["n"])
    assert h["lift"] == pytest.approx(h["error_rate"] / h["baseline_error_rate"])
    p = stats.fisher_exact([[h["n_bad"], h["n"] - h["n_bad"]], [rest_bad, rest_n - rest_bad]],
                           alternative="greater").pvalue
    assert h["p_value"] == pytest.approx(p, rel=1e-9)
    assert h["steps"] and h["condition"]


def test_outcome_metric_is_not_a_tree_feature_unless_asked(planted):
    assert "e2e_ms" not in planted["tree"].features
    s = _store(100_001, True)
    try:
        tree = run_all(s, Cohort("A"), {"sections": ["tree"],
                                        "tree": {"features": ("e2e_ms", "tpot_ms")}})["tree"]
    finally:
        s.close()
    assert "e2e_ms" in tree.features


@pytest.mark.parametrize("seed", [0, 5])
def test_null_data_names_no_module(seed):
    """Correctness independent of every engine metric (bench/conclusion_null.py's generator): the
    in-sample tree used to fire on a small leaf; now nothing survives and no module is named."""
    s = _store(seed, False)
    try:
        for cl in ("A", "B", "C"):
            c = run_all(s, Cohort(cl), SECTIONS)["conclusion"]
            assert c.modules == () and c.suggestions == ()
            assert "no engine module is named" in c.narrative
    finally:
        s.close()


def test_demo_noise_clusters_name_nothing_and_planted_cluster_keeps_its_modules():
    from explorer.core.store import Store
    from explorer.demo import load_demo
    s = Store()
    load_demo(s)
    try:
        for cl in ("final answer missing", "answered an intermediate quantity", "单位换算错误"):
            c = run_all(s, Cohort(cl), SECTIONS)["conclusion"]
            assert c.modules == () and "points to" not in c.narrative, cl
        c = run_all(s, Cohort("计算题中间步骤出错"), SECTIONS)["conclusion"]
        assert {"prefix caching", "KV-cache policy", "scheduler"} <= set(c.modules)
        # the regression the badcases ran into leads the narrative (not "N more findings")
        served, bound = s.con.execute(
            "SELECT count(*) FILTER (WHERE r.engine_version = '0.6.1'), count(*) FROM cases c "
            "JOIN case_links l USING (case_id) JOIN runs r ON r.run_id = l.run_id "
            "WHERE c.cluster = ? AND NOT c.correct", ["计算题中间步骤出错"]).fetchone()
        # after the workload's sentences (issue 35) and the modules named
        second = c.narrative.split("The evidence points to ")[1].split(". ")[1]
        assert second.startswith(f"{served} of the {bound} bound badcases ran on 0.6.1, the "
                                 "release where the KV-cache (prefix) hit rate fell (-"), second
        from explorer.widgets.painters.conclusion import conclusion_html, conclusion_text
        for text in (conclusion_html(c.to_dict()), conclusion_text(c.to_dict())):
            # after the workload sentences (issue 35), still near the top
            assert f"{served} of the {bound} bound badcases ran on 0.6.1" in text[:1600]
    finally:
        s.close()


# ---- a one-badcase cohort still writes its report, saying why sections are empty -----------
def test_one_badcase_cohort_writes_its_report_and_says_why(tmp_path):
    import json

    from explorer.core.report import write_report
    from explorer.core.store import Store
    rng = np.random.default_rng(0)
    n = 300
    ids = [f"q{i}" for i in range(n)]
    bad = np.zeros(n, bool)
    bad[0] = True
    s = Store()
    s.add_run("r", engine_version="1.0", benchmark="b")
    s.append("requests", pd.DataFrame({
        "run_id": "r", "request_id": ids, "kv_cache_hit_rate": rng.random(n),
        "num_preemptions": rng.poisson(0.3, n), "tpot_ms": rng.normal(30, 5, n),
        "batch_size": rng.integers(1, 30, n).astype(float), "ttft_ms": rng.exponential(200, n),
        "queue_ms": rng.exponential(50, n), "arrival_s": np.arange(n) * 0.5,
        "prompt_tokens": rng.integers(100, 900, n)}))
    s.append("cases", pd.DataFrame({"case_id": ids, "category": "m", "correct": ~bad,
                                    "cluster": np.where(bad, "k", None)}))
    s.append("case_links", pd.DataFrame({"case_id": ids, "run_id": "r", "request_id": ids,
                                         "level": 1}))
    try:
        write_report(s, Cohort("k"), tmp_path, formats=["json", "md"])
    finally:
        s.close()

    def no_constant(c):
        raise AssertionError(f"{c} in report.json")
    doc = json.loads((tmp_path / "report.json").read_text(), parse_constant=no_constant)
    assert doc["cohort"]["badcases"] == 1
    assert "at least 10" in doc["tree"]["reason"]
    assert "Only 1 usable case with badcase = 1" in doc["whatif"]["reason"]
    row = next(r for r in doc["comparison"] if r["metric"] == "kv_cache_hit_rate")
    assert row["p_value"] is None and "too few values" in row["reason"]
    nar = doc["conclusion"]["narrative"]
    assert doc["conclusion"]["modules"] == [] and "Only 1 badcase is bound" in nar
    md = (tmp_path / "report.md").read_text()
    assert "at least 10" in md and "Only 1 badcase is bound" in md


def test_values_that_are_not_numbers_become_null_with_their_reason():
    from explorer.core.report import finite_doc
    doc, bad = finite_doc({"whatif": {"refutations": [{"new_effect": float("nan")}],
                                      "estimate": 0.5}, "x": [1.0, float("inf")]})
    assert doc == {"whatif": {"refutations": [{"new_effect": None}], "estimate": 0.5},
                   "x": [1.0, None]}
    assert [b["path"] for b in bad] == ["whatif.refutations[0].new_effect", "x[1]"]
    assert all("not a finite number" in b["reason"] for b in bad)


def test_a_refuter_without_a_finite_estimate_says_it_could_not_run():
    from types import SimpleNamespace

    from explorer.core.analysis.whatif.refute import run_refuter

    class Model:
        def refute_estimate(self, *a, **k):
            return SimpleNamespace(new_effect=float("nan"),
                                   refutation_result={"p_value": float("nan")})
    r = run_refuter(Model(), None, None, "data_subset_refuter", "kv_cache_hit_rate", -0.1,
                    0.05, 5, 0)
    assert r.new_effect is None and r.p_value is None and r.verdict == "could not run"
    assert "could not run" in r.why
