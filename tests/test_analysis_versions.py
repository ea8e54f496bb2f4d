"""Versions: per-version means, Mann-Whitney between consecutive versions, the regression flag
from the knowledge-base direction, accuracy per version; recomputed with numpy / scipy."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.core.analysis.versions import compare_versions, version_key
from explorer.core.errors import NoData

RNG = np.random.default_rng(9)
# version -> (kv hit rate, tpot) samples; 0.10.0 sorts after 0.9.1 numerically
DATA = {"0.9.1": (RNG.beta(7, 3, 300), RNG.normal(20, 3, 300)),
        "0.10.0": (RNG.beta(3, 7, 250), RNG.normal(20, 3, 250)),
        "v0.2.0": (RNG.beta(7, 3, 10), RNG.normal(20, 3, 10))}  # another benchmark, alone


@pytest.fixture(scope="module")
def loaded():
    from explorer.core.store import Store
    s = Store()
    for v, (hit, tpot) in DATA.items():
        bench = "other" if v.startswith("v") else "mmlu"
        # two runs per version on the same benchmark: pooled per version
        for k in range(2):
            run = f"{v}-{k}"
            s.add_run(run, engine_version=v, benchmark=bench)
            half = slice(k * len(hit) // 2, (k + 1) * len(hit) // 2)
            s.append("requests", pd.DataFrame({
                "run_id": run, "request_id": [f"q{i}" for i in range(len(hit))][half],
                "kv_cache_hit_rate": hit[half], "tpot_ms": tpot[half]}))
    # cases bound to the 0.9.1 requests of run 0.9.1-0: 3 of 4 correct
    s.append("cases", pd.DataFrame({"case_id": ["a", "b", "c", "d"], "correct": [True, True, True, False],
                                    "category": ["x", "x", "y", "y"]}))
    s.append("case_links", pd.DataFrame({"case_id": ["a", "b", "c", "d"], "run_id": "0.9.1-0",
                                         "request_id": ["q0", "q1", "q2", "q3"], "level": 1}))
    yield s
    s.close()


def test_version_order():
    assert sorted(["0.10.0", "0.9.1", "0.9.0"], key=version_key) == ["0.9.0", "0.9.1", "0.10.0"]
    assert sorted(["v0.3.0", "v0.2.1"], key=version_key) == ["v0.2.1", "v0.3.0"]


def test_values_changes_and_regression(loaded):
    d = compare_versions(loaded).to_dict()
    assert d["versions"] == ["v0.2.0", "0.9.1", "0.10.0"]
    val = {(r["benchmark"], r["engine_version"], r["metric"]): r for r in d["values"]}
    for v in ("0.9.1", "0.10.0"):
        hit, tpot = DATA[v]
        assert val[("mmlu", v, "kv_cache_hit_rate")]["value"] == pytest.approx(hit.mean())
        assert val[("mmlu", v, "kv_cache_hit_rate")]["n"] == len(hit)
        assert val[("mmlu", v, "tpot_ms")]["value"] == pytest.approx(tpot.mean())
    ch = {c["metric"]: c for c in d["changes"]}
    assert {c["benchmark"] for c in d["changes"]} == {"mmlu"}  # the lone benchmark has no pair
    hit_old, tpot_old = DATA["0.9.1"]
    hit_new, tpot_new = DATA["0.10.0"]
    c = ch["kv_cache_hit_rate"]
    assert (c["from_version"], c["to_version"]) == ("0.9.1", "0.10.0")
    assert c["change_pct"] == pytest.approx((hit_new.mean() - hit_old.mean()) / hit_old.mean() * 100)
    assert c["p_value"] == pytest.approx(stats.mannwhitneyu(hit_old, hit_new).pvalue)
    order = [x["metric"] for x in d["changes"]]
    adj = dict(zip(order, stats.false_discovery_control([ch[m]["p_value"] for m in order])))
    assert c["p_adjusted"] == pytest.approx(adj["kv_cache_hit_rate"])
    assert c["regression"] is True          # hit rate fell, "higher is better" in the KB
    assert ch["tpot_ms"]["regression"] is False  # same distribution: not significant


def test_accuracy_per_version(loaded):
    d = compare_versions(loaded).to_dict()
    assert d["accuracy"] == [{"benchmark": "mmlu", "engine_version": "0.9.1", "accuracy": 0.75, "n_cases": 4}]
    assert [(a["category"], a["accuracy"], a["n_cases"]) for a in d["accuracy_by_category"]] == [
        ("x", 1.0, 2), ("y", 0.5, 2)]


def test_sampled_p_on_large_groups(loaded):
    d = compare_versions(loaded, None, {"sample_max": 100}).to_dict()
    c = next(c for c in d["changes"] if c["metric"] == "kv_cache_hit_rate")
    assert "sample" in c["reason"] and c["p_value"] < 1e-6
    # the means still use every request
    assert c["from_value"] == pytest.approx(DATA["0.9.1"][0].mean())


def test_pooled_when_no_benchmark_is_shared(store):
    for v, b in (("1.0", "x"), ("2.0", "y")):
        store.add_run(v, engine_version=v, benchmark=b)
        store.append("requests", pd.DataFrame({"run_id": v, "request_id": ["1", "2", "3"],
                                               "ttft_ms": [1.0, 2.0, 3.0]}))
    d = compare_versions(store).to_dict()
    assert d["pooled"] and len(d["changes"]) == 1 and d["changes"][0]["benchmark"] is None


def test_no_version_is_no_data(store):
    store.add_run("r")
    store.append("requests", pd.DataFrame({"run_id": "r", "request_id": ["1"], "ttft_ms": [1.0]}))
    with pytest.raises(NoData, match="engine version"):
        compare_versions(store)
