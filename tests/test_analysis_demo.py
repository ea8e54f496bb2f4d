"""The demo workload's planted effect is recovered by the analysis core: KV-cache hit rate and
preemptions significant after adjustment, the tree's first split on one of them, a version
regression flagged, the conclusion naming prefix caching / KV-cache policy and the scheduler."""
import pytest

import explorer.demo as demo


@pytest.fixture(scope="module")
def results():
    from explorer.core.analysis import Cohort, default_cluster
    from explorer.core.sections import run_all
    from explorer.core.store import Store
    s = Store()
    reports = demo.load_demo(s)
    assert not [r.error for r in reports if r.error]
    out = run_all(s, Cohort(default_cluster(s)))
    yield out
    s.close()


def test_planted_metrics_significant_after_adjustment(results):
    comp = results["comparison"]
    for m in ("kv_cache_hit_rate", "num_preemptions"):
        row = comp.row(m)
        assert row.p_adjusted < 0.05, m
    assert comp.row("kv_cache_hit_rate").bad_mean < comp.row("kv_cache_hit_rate").control_mean
    assert comp.row("num_preemptions").bad_mean > comp.row("num_preemptions").control_mean


def test_tree_splits_first_on_a_planted_metric(results):
    tree = results["tree"].to_dict()
    assert tree["nodes"][0]["feature"] in ("kv_cache_hit_rate", "num_preemptions")
    leaf = tree["nodes"][tree["riskiest_path"][-1]]
    assert leaf["error_rate"] > 2 * tree["baseline_error_rate"]


def test_version_regression_flagged(results):
    ch = results["versions"].to_dict()["changes"]
    flagged = [c for c in ch if c["regression"]]
    assert flagged and all((c["from_version"], c["to_version"]) == ("0.5.2", "0.6.1") for c in flagged)


def test_conclusion_names_the_modules(results):
    c = results["conclusion"].to_dict()
    assert "scheduler" in c["modules"]
    assert {"prefix caching", "KV-cache policy"} & set(c["modules"])
    assert any("--enable-prefix-caching" in s["flags"] for s in c["suggestions"])
