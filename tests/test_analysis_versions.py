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
    # two runs per version: tested at run level (Welch's t over the runs' means); the
    # request-level Mann-Whitney p is kept beside it
    assert c["p_requests"] == pytest.approx(stats.mannwhitneyu(hit_old, hit_new).pvalue)

    def run_means(h):
        return [h[: len(h) // 2].mean(), h[len(h) // 2:].mean()]
    assert c["p_value"] == pytest.approx(stats.ttest_ind(run_means(hit_old), run_means(hit_new),
                                                         equal_var=False).pvalue)
    assert (c["runs_from"], c["runs_to"]) == (2, 2) and c["test"].startswith("welch-t")
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
    assert "sample" in c["reason"] and c["p_requests"] < 1e-6
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


# ---- only benchmarks seen on two versions are compared ---------------------------------------
def test_single_version_benchmarks_listed_not_compared(store):
    from explorer.core.analysis.versions import change_rank  # noqa: F401 (public sort key)
    from explorer.core.report import render_markdown

    rng = np.random.default_rng(3)
    data = {}
    # "shared" on both versions (TTFT doubles, TPOT unchanged); three benchmarks on one only
    for bench, ver, ttft in (("shared", "1.0", 100), ("shared", "2.0", 200), ("lone/0.1", "1.0", 50),
                             ("lone/0.5", "1.0", 60), ("lone/0.9", "1.0", 70), ("new", "2.0", 80)):
        run = f"{bench}@{ver}"
        store.add_run(run, engine_version=ver, benchmark=bench)
        data[(bench, ver)] = (rng.exponential(ttft, 120), rng.normal(30, 3, 120))
        store.append("requests", pd.DataFrame({"run_id": run, "request_id": [str(i) for i in range(120)],
                                               "ttft_ms": data[(bench, ver)][0],
                                               "tpot_ms": data[(bench, ver)][1]}))
    d = compare_versions(store).to_dict()
    assert {v["benchmark"] for v in d["values"]} == {"shared"}
    assert {c["benchmark"] for c in d["changes"]} == {"shared"}
    assert sorted((s["benchmark"], s["engine_version"]) for s in d["single_version"]) == [
        ("lone/0.1", "1.0"), ("lone/0.5", "1.0"), ("lone/0.9", "1.0"), ("new", "2.0")]
    # sorted: the regression (TTFT doubled) first, then by adjusted p
    p = {m: stats.mannwhitneyu(data[("shared", "1.0")][k], data[("shared", "2.0")][k]).pvalue
         for k, m in enumerate(("ttft_ms", "tpot_ms"))}
    assert [c["metric"] for c in d["changes"]] == sorted(p, key=p.get)
    assert d["changes"][0]["regression"] is True and d["changes"][1]["regression"] is False
    ttft = d["summary"][0]
    old, new = data[("shared", "1.0")][0], data[("shared", "2.0")][0]
    assert (ttft["metric"], ttft["benchmarks"], ttft["regressions"]) == ("ttft_ms", 1, 1)
    assert ttft["median_change_pct"] == pytest.approx((new.mean() - old.mean()) / old.mean() * 100)
    md = render_markdown({"versions": d})
    assert "4 benchmarks seen in one version only" in md
    assert "lone/{0.1 … 0.9} (3)" in md and "2.0: new" in md
    assert "| lone" not in md  # no table column / row for a benchmark seen once


def test_real_aibrix_one_release_configurations(real):
    """naive_output_* exist in both releases, aibrix_high_low_output_* only in v0.2.1 and
    aibrix_naive_output_* only in v0.3.0: only the naive sweep is compared."""
    from explorer.core.report import render_markdown
    from explorer.core.store import Store

    files = sorted(real.glob("aibrix/ps_experiment_v0.*/naive_output_*.csv")) + \
        sorted(real.glob("aibrix/ps_experiment_v0.2.1_*/aibrix_high_low_output_*.csv")) + \
        sorted(real.glob("aibrix/ps_experiment_v0.3.0_*/aibrix_naive_output_*.csv"))
    rates = {f.stem.rsplit("_", 1)[1] for f in files if f.name.startswith("naive_output_")}
    once = [f for f in files if not f.name.startswith("naive_output_")]
    s = Store()
    try:
        s.load_paths([str(f) for f in files])
        d = compare_versions(s).to_dict()
    finally:
        s.close()
    assert {c["benchmark"].rsplit("/", 1)[1] for c in d["all_changes"]} == rates
    assert all("/naive/" in c["benchmark"] for c in d["all_changes"] + d["values"])
    assert len(d["single_version"]) == len(once)
    flags = [c["regression"] for c in d["all_changes"]]
    assert flags == sorted(flags, reverse=True)  # regressions first
    md = render_markdown({"versions": d})
    assert f"{len(once)} benchmarks seen in one version only" in md
    assert len(md.splitlines()) < 60



def test_workload_change_is_a_confounder_not_a_regression():
    """Prompts 19% longer on the newer release (one run each): a workload difference, reported
    as such (and as a confounder), never a regression; TTFT's rise still is one; with one run per
    version the notes say run-to-run variance is unknown."""
    from explorer.core.store import Store
    r = np.random.default_rng(4)
    s = Store()
    prompts = {"1.0": r.integers(800, 1200, 400), "1.1": np.round(r.integers(800, 1200, 400) * 1.19).astype(int)}
    ttft = {"1.0": r.normal(200, 20, 400), "1.1": r.normal(260, 20, 400)}
    for v in prompts:
        s.add_run(v, engine_version=v, benchmark="b")
        s.append("requests", pd.DataFrame({"run_id": v, "request_id": [f"q{i}" for i in range(400)],
                                           "prompt_tokens": prompts[v], "ttft_ms": ttft[v]}))
    try:
        d = compare_versions(s).to_dict()
    finally:
        s.close()
    ch = {c["metric"]: c for c in d["all_changes"]}
    pt = ch["prompt_tokens"]
    want = (prompts["1.1"].mean() - prompts["1.0"].mean()) / prompts["1.0"].mean() * 100
    assert pt["change_pct"] == pytest.approx(want) and 15 < want < 23
    assert pt["p_value"] == pytest.approx(stats.mannwhitneyu(prompts["1.0"], prompts["1.1"]).pvalue)
    assert pt["regression"] is False and pt["workload_differs"] is True
    assert ch["ttft_ms"]["regression"] is True and ch["ttft_ms"]["workload_differs"] is False
    notes = " ".join(d["notes"])
    assert "The workload differs between the releases: prompt tokens +" in notes
    assert "not a regression but a confounder" in notes
    assert "One run per version: run-to-run variance is unknown" in notes


# ---- the hash sample (queries/analysis_versions_sample.sql) -----------------------------------
def test_hash_sample_is_the_rows_its_header_names(store):
    """The sample is exactly the requests of the runs that name a version (of the eval's bound
    runs when eval_id is given) whose (benchmark, version) group holds at most max_n requests,
    plus, in the larger groups, those with abs(hash(run_id, request_id) % 1000003) <
    1000003 * max_n / n (n: the group's requests). Recomputed in pandas from DuckDB's hash of
    each row, for groups above and below max_n, a version spread over two runs, a NULL
    benchmark, a run without a version, pooled and per benchmark, with and without eval_id."""
    rng = np.random.default_rng(11)
    runs = [("a1", "a", "1.0", 700), ("a1b", "a", "1.0", 500), ("a2", "a", "2.0", 800),
            ("n1", None, "1.0", 1500), ("n2", None, "2.0", 300), ("x", "a", None, 900)]
    reqs = []
    for run, bench, ver, n in runs:
        store.add_run(run, engine_version=ver, benchmark=bench)
        reqs.append(pd.DataFrame({"run_id": run, "request_id": [f"q{i}" for i in range(n)],
                                  "ttft_ms": np.arange(n) + 0.5, "tpot_ms": rng.gamma(4, 4, n)}))
        store.append("requests", reqs[-1])
    req = pd.concat(reqs, ignore_index=True)
    store.append("cases", pd.DataFrame({"case_id": ["c1", "c2"], "eval_id": "e1", "correct": True}))
    store.append("case_links", pd.DataFrame({"case_id": ["c1", "c2"], "run_id": ["a1b", "n2"],
                                             "request_id": "q1", "level": 1}))
    h = store.con.execute("SELECT run_id, request_id, hash(run_id, request_id) AS h "
                          "FROM requests").df()
    req = req.merge(h, on=["run_id", "request_id"])
    meta = pd.DataFrame(runs, columns=["run_id", "benchmark", "engine_version", "n_run"])
    req = req.merge(meta, on="run_id")
    key = ["benchmark", "engine_version", "run_id", "ttft_ms"]
    for by_bench, eval_id, max_n in ((True, None, 1000), (False, None, 1000),
                                     (True, "e1", 400), (True, None, 10_000)):
        r = req[req["engine_version"].notna()].copy()
        if eval_id:
            r = r[r["run_id"].isin(["a1b", "n2"])]
        if not by_bench:
            r["benchmark"] = None
        n = r.groupby([r["benchmark"].fillna("\0"), "engine_version"])["run_id"] \
            .transform("size").to_numpy()
        thr = 1000003 * max_n / n
        keep = (n <= max_n) | ((r["h"].to_numpy() % 1000003).astype(float) < thr)
        want = r[keep][key].sort_values(key, na_position="first").reset_index(drop=True)
        got = store.query("analysis_versions_sample", {"max_n": max_n, "by_benchmark": by_bench,
                                                       "eval_id": eval_id})
        got = got[key].sort_values(key, na_position="first").reset_index(drop=True)
        assert got.astype(object).where(got.notna(), None).values.tolist() == \
            want.astype(object).where(want.notna(), None).values.tolist(), (by_bench, eval_id)
        if max_n < 10_000:  # the larger groups were sampled, the smaller ones kept whole
            assert 0 < len(want) < len(r)


def test_changes_are_tested_without_a_benchmark_column(store):
    """Runs that name a version but no benchmark (pooled per version): the requests are
    sampled and tested like any other (issue 35: the NULL benchmark's samples were keyed by ''
    under pandas 3, every change read "too few values (n=0 and 0)")."""
    r = np.random.default_rng(35)
    hit = {"1.0": r.beta(7, 3, 300), "2.0": r.beta(3, 7, 300)}
    for v, h in hit.items():
        store.add_run(v, engine_version=v)
        store.append("requests", pd.DataFrame({"run_id": v, "request_id": [f"q{i}" for i in range(300)],
                                               "kv_cache_hit_rate": h}))
    d = compare_versions(store).to_dict()
    c = next(c for c in d["all_changes"] if c["metric"] == "kv_cache_hit_rate")
    assert c["benchmark"] is None and c["reason"] is None
    assert c["p_value"] == pytest.approx(stats.mannwhitneyu(hit["1.0"], hit["2.0"]).pvalue)
    assert c["regression"] is True
