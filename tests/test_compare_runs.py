"""Runs compared (DESIGN "Comparing runs"): workloads, like with like, run-to-run noise, item by
item; every number recomputed here with numpy / scipy / statsmodels."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.core.analysis.runcompare import compare_runs
from explorer.core.analysis.runcompare import stats as st
from explorer.core.analysis.runcompare.workload import set_workload

RNG = np.random.default_rng(3)


def _run(s, run_id, ttft, *, version="0.6.0", engine="vllm", config=None, prompt=1000,
         completion=200):
    s.add_run(run_id, engine=engine, engine_version=version, label=run_id, benchmark="random",
              config=config or {"dataset_name": "random", "request_rate": 4.0})
    n = len(ttft)
    s.append("requests", pd.DataFrame({
        "run_id": run_id, "request_id": [f"r{i}" for i in range(n)],
        "arrival_s": np.arange(n) * 0.25, "ttft_ms": ttft, "tpot_ms": RNG.normal(20, 2, n),
        "e2e_ms": ttft + 4000.0, "prompt_tokens": prompt, "completion_tokens": completion}))


@pytest.fixture()
def store():
    from explorer.core.store import Store
    s = Store()
    yield s
    s.close()


def _pair(doc, a, b):
    return next(p for p in doc["pairs"] if set(p["runs_a"]) == {a} and set(p["runs_b"]) == {b})


def _metric(pair, m, stat):
    return next(x for x in pair["metrics"] if (x["metric"], x["stat"]) == (m, stat))


def test_different_workloads_flag_nothing(store):
    """10000-in / 500-out against 30000-in / 100-out (the issue's DeepSeek-R1 case): the pair is
    marked as two workloads, says how they differ, and no metric is flagged, though TTFT is 3x."""
    _run(store, "a", RNG.normal(1000, 50, 200),
         config={"dataset_name": "random", "random_input_len": 10000, "random_output_len": 500,
                 "max_concurrency": 64})
    _run(store, "b", RNG.normal(3000, 50, 200), engine="sglang",
         config={"dataset_name": "random", "random_input_len": 30000, "random_output_len": 100,
                 "max_concurrency": 64})
    doc = compare_runs(store, {"runs": ["a", "b"]})
    assert len(doc["workloads"]) == 2
    p = _pair(doc, "a", "b")
    assert p["same_workload"] is False
    parts = {d["part"]: (d["a"], d["b"]) for d in p["workload_differs"]}
    assert parts == {"input_len": (10000.0, 30000.0), "output_len": (500.0, 100.0)}
    assert "input length 10,000 vs 30,000" in p["notes"][0]   # counts with separators
    ttft = _metric(p, "ttft_ms", "mean")
    assert ttft["diff_pct"] > 150
    assert all(m["regression"] is False and m["beyond_noise"] is None for m in p["metrics"])
    # the default pairing never pairs two workloads
    from explorer.core.errors import NoData
    with pytest.raises(NoData, match="2 runs in 2 workloads"):
        compare_runs(store)


def test_one_run_per_side_says_spread_unknown(store):
    a, b = RNG.normal(1000, 100, 300), RNG.normal(1300, 100, 250)
    _run(store, "a", a)
    _run(store, "b", b, version="0.6.1")
    doc = compare_runs(store)
    p = _pair(doc, "a", "b")
    assert p["same_workload"] and p["differs_in"] == ["engine_version"]
    assert any("spread is unknown" in n for n in p["notes"])
    m = _metric(p, "ttft_ms", "mean")
    assert m["a"] == pytest.approx(a.mean()) and m["b"] == pytest.approx(b.mean())
    t = stats.ttest_ind(b, a, equal_var=False)
    ci = t.confidence_interval(0.95)
    assert (m["ci_low"], m["ci_high"], m["p_value"]) == pytest.approx((ci.low, ci.high, t.pvalue))
    assert m["beyond_noise"] is None and m["regression"] is None and m["change"] == "higher"
    med = _metric(p, "ttft_ms", "median")
    assert med["a"] == pytest.approx(np.median(a)) and med["b"] == pytest.approx(np.median(b))
    assert med["p_value"] == pytest.approx(stats.mannwhitneyu(b, a).pvalue)
    p99 = _metric(p, "ttft_ms", "p99")
    assert p99["b"] == pytest.approx(np.percentile(b, 99))
    # the interval against scipy's own two-sample percentile bootstrap (resampling error apart)
    ref = stats.bootstrap((a, b), lambda x, y, axis: np.median(y, axis=axis)
                          - np.median(x, axis=axis), method="percentile", n_resamples=4000,
                          random_state=1, vectorized=True).confidence_interval
    assert med["ci_low"] == pytest.approx(ref.low, abs=25)
    assert med["ci_high"] == pytest.approx(ref.high, abs=25)
    hl = med["hodges_lehmann"]
    assert hl["shift"] == pytest.approx(np.median(np.subtract.outer(b, a)))
    assert hl["ci_low"] < hl["shift"] < hl["ci_high"]
    # throughputs: completion tokens over the span from the first arrival to the last finish
    out = _metric(p, "output_throughput", "value")
    span = (len(a) - 1) * 0.25 + (a[-1] + 4000) / 1000
    assert out["a"] == pytest.approx(200 * len(a) / span)


def test_repeats_give_the_noise(store):
    """Three runs per side: run-to-run spread as AIPerf reports it, Welch over the run values;
    a 3 % shift within a 10 % run-to-run spread is within noise; a 40 % one is a regression."""
    means_a = [1000, 1100, 900]
    for k, mu in enumerate(means_a):
        _run(store, f"a{k}", RNG.normal(mu, 30, 400))
    for k, mu in enumerate([1030, 1130, 930]):
        _run(store, f"b{k}", RNG.normal(mu, 30, 400), version="0.6.1")
    for k, mu in enumerate([1400, 1500, 1300]):
        _run(store, f"c{k}", RNG.normal(mu, 30, 400), version="0.7.0")
    doc = compare_runs(store)
    by = {(tuple(p["runs_a"]), tuple(p["runs_b"])): p for p in doc["pairs"]}
    ab = by[(("a0", "a1", "a2"), ("b0", "b1", "b2"))]
    m = _metric(ab, "ttft_ms", "mean")
    va = [store.scalar("SELECT avg(ttft_ms) FROM requests WHERE run_id = ?", [f"a{k}"])
          for k in range(3)]
    sa = m["spread_a"]
    assert sa["mean"] == pytest.approx(np.mean(va)) and sa["std"] == pytest.approx(np.std(va, ddof=1))
    assert sa["cv"] == pytest.approx(np.std(va, ddof=1) / np.mean(va))
    h = stats.t.ppf(0.975, 2) * np.std(va, ddof=1) / np.sqrt(3)
    assert (sa["ci_low"], sa["ci_high"]) == pytest.approx((np.mean(va) - h, np.mean(va) + h))
    assert m["beyond_noise"] is False and m["regression"] is False
    # the requests alone would call the 3 % shift: their interval excludes 0
    assert m["ci_low"] > 0
    ac = by[(("a0", "a1", "a2"), ("c0", "c1", "c2"))]
    m = _metric(ac, "ttft_ms", "mean")
    vc = [store.scalar("SELECT avg(ttft_ms) FROM requests WHERE run_id = ?", [f"c{k}"])
          for k in range(3)]
    assert stats.ttest_ind(vc, va, equal_var=False).pvalue < 0.05
    assert m["beyond_noise"] is True and m["regression"] is True


def test_user_workload_and_baseline(store):
    _run(store, "a", RNG.normal(1000, 50, 100))
    _run(store, "b", RNG.normal(1000, 50, 100), version="0.6.1",
         config={"dataset_name": "sharegpt", "request_rate": 4.0})
    assert compare_runs(store, {"baseline": "a"})["pairs"][0]["same_workload"] is False
    set_workload(store, "a", "chat")
    set_workload(store, "b", "chat")
    doc = compare_runs(store, {"baseline": "a"})
    assert doc["pairs"][0]["same_workload"] is True
    assert json.loads(store.scalar("SELECT config FROM runs WHERE run_id = 'a'"))["workload"] == "chat"
    with pytest.raises(ValueError, match="nope"):
        compare_runs(store, {"baseline": "nope"})


def test_statistics_against_references():
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.proportion import proportion_confint
    assert st.wilson(37, 120)[1:] == pytest.approx(list(proportion_confint(37, 120, method="wilson")))
    table = [[50, 9], [21, 40]]
    assert st.mcnemar_exact(21, 9) == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_mmlu_pro_8b_70b_item_by_item(real):
    """The real MMLU-Pro outputs of Llama-3.1 8B and 70B on the same 316 questions."""
    from explorer.core.store import Store
    folder = real / "mmlu_pro_outputs"
    s = Store()
    try:
        s.load_paths([folder])
        doc = compare_runs(s)
    finally:
        s.close()
    (p,) = [p for p in doc["pairs"] if p["kind"] == "eval"]
    it = p["items"]
    # recomputed from the files themselves: correct when pred == answer, paired by question_id
    rows = {}
    for path in sorted(folder.glob("*.json")):
        rows["70B" if "70B" in path.name else "8B"] = {
            r["question_id"]: r["pred"] == r["answer"] for r in json.loads(path.read_text())}
    a_side = "8B" if "8B" in p["a"] else "70B"
    b_side = "70B" if a_side == "8B" else "8B"
    A, B = rows[a_side], rows[b_side]
    common = sorted(set(A) & set(B))
    assert it["paired"] == len(common) == 316
    counts = {"both_right": sum(A[q] and B[q] for q in common),
              "a_only_right": sum(A[q] and not B[q] for q in common),
              "b_only_right": sum(B[q] and not A[q] for q in common),
              "both_wrong": sum(not A[q] and not B[q] for q in common)}
    assert {k: it[k] for k in counts} == counts
    n10, n01 = counts["a_only_right"], counts["b_only_right"]
    assert it["mcnemar_p"] == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5).pvalue)
    assert it["mcnemar_p"] < 0.001  # 70B is right on far more of the discordant questions
    acc8 = sum(rows["8B"].values()) / 316
    assert acc8 == pytest.approx(0.462, abs=0.001)
    assert it["accuracy_a" if a_side == "8B" else "accuracy_b"][0] == pytest.approx(acc8)
    assert any("fewer than 300" in w for w in it["warnings"]) is False  # 316 paired
    d = it["difference"]
    assert d[1] < d[0] < d[2]
    print(a_side, b_side, counts, it["mcnemar_p"], d)


def test_aibrix_releases(real):
    """Two aibrix releases of the same benchmark: naive is in both, and its TTFT rose at
    2.1 QPS with an interval that excludes 0; ps_naive (0.2.1) and ps_stack (0.3.0) are in one
    release only, and the comparison says so."""
    from explorer.core.store import Store
    base = real / "aibrix"
    files = [base / f"ps_experiment_v0.2.1_20250323/{c}_output_2.1.csv" for c in ("naive", "ps_naive")]
    files += [base / f"ps_experiment_v0.3.0_20250519/{c}_output_2.1.csv" for c in ("naive", "ps_stack")]
    s = Store()
    try:
        s.load_paths(files)
        doc = compare_runs(s)
        old = s.df("SELECT ttft_ms FROM requests WHERE run_id = 'aibrix:0.2.1:naive_output_2.1'")
        new = s.df("SELECT ttft_ms FROM requests WHERE run_id = 'aibrix:0.3.0:naive_output_2.1'")
    finally:
        s.close()
    assert len(doc["workloads"]) == 1
    p = _pair(doc, "aibrix:0.2.1:naive_output_2.1", "aibrix:0.3.0:naive_output_2.1")
    assert p["differs_in"] == ["engine_version"]
    m = _metric(p, "ttft_ms", "mean")
    # against the CSVs' own `ttft` column (seconds), read with pandas
    raw = {v: pd.read_csv(base / f"ps_experiment_v{v}/naive_output_2.1.csv")["ttft"] * 1000
           for v in ("0.2.1_20250323", "0.3.0_20250519")}
    a, b = raw["0.2.1_20250323"].to_numpy(), raw["0.3.0_20250519"].to_numpy()
    assert m["a"] == pytest.approx(a.mean()) and m["b"] == pytest.approx(b.mean())
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert (m["ci_low"], m["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert m["ci_low"] > 0 and m["change"] == "higher"       # TTFT rose
    assert m["diff_pct"] == pytest.approx((b.mean() - a.mean()) / a.mean() * 100)
    assert m["beyond_noise"] is None                          # one run per release
    assert len(old) == len(a) and len(new) == len(b)
    only = {u["setting"]["config"]: (u["versions"], u["missing"]) for u in doc["unmatched"]}
    assert only == {"ps_naive": (["0.2.1"], ["0.3.0"]), "ps_stack": (["0.3.0"], ["0.2.1"])}
    print(f"naive TTFT mean {a.mean():.0f} -> {b.mean():.0f} ms, "
          f"B - A [{m['ci_low']:.0f}, {m['ci_high']:.0f}]")


def test_items_bound_to_requests_engine_state(store):
    """Two runs answered the same 400 items; the items B lost ran with a lower KV-cache hit rate
    on B: the pair's items carry the counts and that engine state, recomputed here."""
    n = 400
    a_ok = RNG.random(n) < 0.7
    b_ok = a_ok.copy()
    lost = np.flatnonzero(a_ok)[:46]
    b_ok[lost] = False
    hit_b = np.where(np.isin(np.arange(n), lost), RNG.beta(2, 12, n), RNG.beta(6, 4, n))
    for run, ok, hit, ev in (("a", a_ok, RNG.beta(6, 4, n), "e1"), ("b", b_ok, hit_b, "e2")):
        _run(store, run, RNG.normal(1000, 50, n), version="0.6.0" if run == "a" else "0.6.1")
        store.execute("UPDATE requests SET kv_cache_hit_rate = h.hit FROM (SELECT unnest(?) AS "
                      "hit, unnest(?) AS rid) h WHERE run_id = ? AND request_id = h.rid",
                      [hit.tolist(), [f"r{i}" for i in range(n)], run])
        store.append("cases", pd.DataFrame({
            "case_id": [f"{ev}:{i}" for i in range(n)], "eval_id": ev, "benchmark": "mmlu",
            "correct": ok}))
        store.append("case_links", pd.DataFrame({
            "case_id": [f"{ev}:{i}" for i in range(n)], "run_id": run,
            "request_id": [f"r{i}" for i in range(n)], "level": 1}))
    doc = compare_runs(store)
    p = _pair(doc, "a", "b")
    it = p["items"]
    assert it["paired"] == n and it["a_only_right"] == 46 and it["b_only_right"] == 0
    assert it["both_right"] == int((a_ok & b_ok).sum())
    assert it["mcnemar_p"] == pytest.approx(stats.binomtest(46, 46, 0.5).pvalue)
    eb = it["engine_state"]["b"]
    hit = next(m for m in eb["metrics"] if m["metric"] == "kv_cache_hit_rate")
    mask = np.isin(np.arange(n), lost)
    assert eb["lost"] == 46
    assert hit["lost_mean"] == pytest.approx(hit_b[mask].mean())
    assert hit["others_mean"] == pytest.approx(hit_b[~mask].mean())
    assert hit["p_value"] == pytest.approx(stats.mannwhitneyu(hit_b[mask], hit_b[~mask]).pvalue)
    assert "the 46 items B lost" in eb["sentence"]
    # the two evals are also paired item by item on their own
    (ev,) = [q for q in doc["pairs"] if q["kind"] == "eval"]
    assert ev["items"]["a_only_right"] == 46


def test_compare_command(real, tmp_path):
    from explorer.__main__ import main
    base = real / "aibrix"
    files = [str(base / f"ps_experiment_v{v}/naive_output_{q}.csv")
             for v in ("0.2.1_20250323", "0.3.0_20250519") for q in ("0.5", "1.3", "2.1")]
    assert main(["compare", *files, "--out", str(tmp_path), "--format", "json,md"]) == 0
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert {"runs", "workloads", "pairs", "sweeps"} <= set(doc)
    assert len(doc["workloads"]) == 3 and len(doc["pairs"]) == 3
    assert {sw["name"] for sw in doc["sweeps"]} == {"aibrix 0.2.1 config=naive",
                                                   "aibrix 0.3.0 config=naive"}
    sw = doc["sweeps"][0]
    assert [pt["x"] for pt in sw["points"]] == [0.5, 1.3, 2.1]
    md = (tmp_path / "compare.md").read_text()
    assert "spread is unknown" in md and "naive_output_2.1 (0.2.1)" in md
    assert main(["compare", *files, "--out", str(tmp_path), "--baseline", "nope"]) == 2


def test_one_run_is_nothing_to_compare(store):
    from explorer.core.errors import NoData
    _run(store, "a", RNG.normal(1000, 50, 50))
    with pytest.raises(NoData, match="fewer than two runs"):
        compare_runs(store)
