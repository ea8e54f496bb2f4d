"""Data-generating processes of issue 35, each with its truth, and how the product is scored on
them (tests/test_analysis_workload_dgp.py on a small sample, bench/workload_dgp.py at full size).

Every dataset: eval cases bound one-to-one to requests of an engine whose metrics are coupled
as in a server (engine()): a longer prompt lowers the hit rate and lengthens prefill, preemptions
rise as the hit rate falls and the answer grows, TTFT = queue + uncached prefill, TPOT grows with
the batch and the context, E2E = TTFT + TPOT x output tokens. What decides correctness is the
kind's own equation (KINDS); `modules` is what a careful engineer would name (empty: nothing
about the engine), `found` the modules of which one must be named.

Scores per dataset (score()): named (a module is named), found (one of the truth's modules is
named), wrong (a module outside the truth's is named), covers (the what-if interval holds the
true effect). Versions kinds score the versions section's regression flags instead.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

SECTIONS = {"sections": ["cohort", "comparison", "tree", "versions", "conclusion"]}
SCHEDULER = frozenset({"scheduler", "KV-cache policy"})
CACHE = frozenset({"prefix caching", "KV-cache policy", "scheduler"})


def _sig(x):
    return 1 / (1 + np.exp(-x))


def engine(rng, prompt, output, hit_shift=0.0, pre_scale=1.0) -> dict:
    """Engine metrics of requests with these prompt / output token counts (module doc)."""
    n = len(prompt)
    hit = np.clip(0.62 - 0.12 * np.log(prompt / 1000) + rng.normal(0, 0.15, n) - hit_shift, 0, 1)
    batch = rng.integers(1, 48, n).astype(float)
    pre = rng.poisson(pre_scale * (0.1 + 0.5 * (1 - hit) + 0.0003 * output))
    tpot = 10 + 0.35 * batch + 0.0008 * prompt + rng.normal(0, 2, n)
    queue = rng.exponential(60 + 30 * pre)
    ttft = queue + 0.05 * prompt * (1 - hit) + rng.exponential(40, n)
    return {"kv_cache_hit_rate": hit, "num_preemptions": pre.astype(float), "batch_size": batch,
            "tpot_ms": tpot, "queue_ms": queue, "ttft_ms": ttft, "e2e_ms": ttft + tpot * output}


def _lengths(rng, n, scale=1.0):
    return (np.round(rng.lognormal(np.log(1200), 0.6, n) * scale).clip(50, 30000),
            rng.integers(20, 600, n).astype(float))


def store_of(df: pd.DataFrame, benchmark: bool = True):
    """A Store of the frame's cases (columns: version, eval_id, category, correct, cluster,
    prompt, output and the engine metrics), one request per case, one run per version."""
    from explorer.core.store import Store
    s = Store()
    df = df.reset_index(drop=True)
    ids = np.char.add("q", np.arange(len(df)).astype(str))
    run = df["version"].astype(str).to_numpy()
    for v in sorted(set(run)):
        s.add_run(v, engine_version=v, benchmark="b" if benchmark else None)
    req = {"run_id": run, "request_id": ids, "arrival_s": np.arange(len(df)) * 0.5,
           "prompt_tokens": df["prompt"].to_numpy(), "completion_tokens": df["output"].to_numpy(),
           "finish_reason": "stop"}
    for m in ("kv_cache_hit_rate", "num_preemptions", "batch_size", "tpot_ms", "queue_ms",
              "ttft_ms", "e2e_ms"):
        req[m] = df[m].to_numpy()
    s.append("requests", pd.DataFrame(req))
    s.append("cases", pd.DataFrame({
        "case_id": ids, "eval_id": df["eval_id"].to_numpy(), "category": df["category"].to_numpy(),
        "correct": df["correct"].to_numpy(dtype=bool),
        "cluster": np.where(df["correct"], None, df["cluster"]).astype(object),
        "prompt_tokens": df["prompt"].to_numpy(), "completion_tokens": df["output"].to_numpy()}))
    s.append("case_links", pd.DataFrame({"case_id": ids, "run_id": run, "request_id": ids,
                                         "level": 1, "score": 1.0}))
    return s


def _frame(rng, n, prompt, output, eng, p_err, version="1.0", eval_id="e", category="c",
           cluster="A") -> pd.DataFrame:
    bad = rng.random(n) < p_err
    return pd.DataFrame({"version": version, "eval_id": eval_id, "category": category,
                         "correct": ~bad, "cluster": cluster, "prompt": prompt,
                         "output": output, **eng})


# ---- the kinds --------------------------------------------------------------------------------
def category_confound(rng, n):
    """No engine effect; hard categories have 3x longer prompts and a 25% (not 6%) error rate."""
    parts = []
    for cat, scale, p in (("easy", 1.0, 0.06), ("hard", 3.0, 0.25)):
        pr, out = _lengths(rng, n // 2, scale)
        parts.append(_frame(rng, n // 2, pr, out, engine(rng, pr, out), p, category=cat))
    return pd.concat(parts), {}


def long_prompts(strength):
    def gen(rng, n):
        """Only the prompt length decides correctness (logit slope `strength` per log unit)."""
        pr, out = _lengths(rng, n)
        p = _sig(-2.2 + strength * (np.log(pr) - np.log(1200)))
        return _frame(rng, n, pr, out, engine(rng, pr, out), p), {}
    gen.__doc__ = f"Only the prompt length decides correctness (logit slope {strength})."
    return gen


def simpson(key):
    def gen(rng, n):
        """Two evals (or versions): the second fails 3x as often and hits the cache less; within
        each, correctness is independent of the engine."""
        parts = []
        for i, (shift, p) in enumerate(((0.0, 0.08), (0.25, 0.25))):
            pr, out = _lengths(rng, n // 2)
            kw = {"eval_id": f"e{i}"} if key == "eval" else {"version": f"1.{i}"}
            parts.append(_frame(rng, n // 2, pr, out, engine(rng, pr, out, hit_shift=shift), p,
                                **kw))
        return pd.concat(parts), {}
    return gen


def hidden_version(rng, n):
    """Version 1.0: errors rise with preemptions (logit +0.9 each); 1.1 preempts a third as
    often but fails more for another reason (25% flat)."""
    pr, out = _lengths(rng, n // 2)
    e = engine(rng, pr, out)
    a = _frame(rng, n // 2, pr, out, e, _sig(-2.6 + 0.9 * e["num_preemptions"]), version="1.0")
    pr, out = _lengths(rng, n // 2)
    b = _frame(rng, n // 2, pr, out, engine(rng, pr, out, pre_scale=0.33), 0.25, version="1.1")
    return pd.concat([a, b]), {"modules": SCHEDULER}


def cluster_noise(rng, n):
    """Cluster A: a large cache / preemption effect; clusters B and C: 5% noise each."""
    pr, out = _lengths(rng, n)
    e = engine(rng, pr, out)
    df = _frame(rng, n, pr, out, e, 0.0)
    planted = rng.random(n) < _sig(-3.2 - 4 * (e["kv_cache_hit_rate"] - 0.5)
                                   + 0.8 * e["num_preemptions"])
    noise = ~planted & (rng.random(n) < 0.10)
    df["correct"] = ~(planted | noise)
    df["cluster"] = np.where(planted, "A", rng.choice(["B", "C"], n))
    return df, {"modules": CACHE, "null_clusters": ("B", "C")}


def cluster_noise_first(rng, n):
    """As cluster_noise, but the noise is labelled first: 10% of all cases fail at random into
    B or C whatever their engine metrics; cluster A (a strong cache / preemption effect) takes
    failures among the rest. B and C are then random samples of every case, and the correct
    cases lack the preempted requests that A's failures removed: a correct-only control makes
    B look preempted (the issue's 7 of 30); every case outside B (control "outside-cluster")
    is a fair control."""
    pr, out = _lengths(rng, n)
    e = engine(rng, pr, out)
    df = _frame(rng, n, pr, out, e, 0.0)
    noise = rng.random(n) < 0.10
    planted = ~noise & (rng.random(n) < _sig(-2.2 - 5 * (e["kv_cache_hit_rate"] - 0.5)
                                             + 1.2 * e["num_preemptions"]))
    df["correct"] = ~(planted | noise)
    df["cluster"] = np.where(planted, "A", rng.choice(["B", "C"], n))
    return df, {"modules": CACHE, "null_clusters": ("B", "C")}


def realistic(rng, n):
    """Errors 10% -> 14% when preempted at least once."""
    pr, out = _lengths(rng, n)
    e = engine(rng, pr, out)
    return _frame(rng, n, pr, out, e, np.where(e["num_preemptions"] >= 1, 0.14, 0.10)), \
        {"modules": SCHEDULER}


def stale_cache(rng, n):
    """Errors rise WITH the hit rate (stale or mis-hashed blocks): logit -3.2 + 3 hit."""
    pr, out = _lengths(rng, n)
    e = engine(rng, pr, out)
    return _frame(rng, n, pr, out, e, _sig(-3.4 + 3.0 * e["kv_cache_hit_rate"])), \
        {"modules": frozenset({"prefix caching"})}


def version_workload(rng, n):
    """Version 1.1 served 2.5x longer prompts on the same engine (benchmark column): not a
    regression."""
    parts = []
    for v, scale in (("1.0", 1.0), ("1.1", 2.5)):
        pr, out = _lengths(rng, n // 2, scale)
        parts.append(_frame(rng, n // 2, pr, out, engine(rng, pr, out), 0.1, version=v))
    return pd.concat(parts), {"regressions": frozenset(), "benchmark": True}


def version_regression(rng, n):
    """Version 1.1 keeps fewer prefix blocks (hit rate 0.15 lower), same workload, no benchmark
    column: a hit-rate regression."""
    parts = []
    for v, shift in (("1.0", 0.0), ("1.1", 0.15)):
        pr, out = _lengths(rng, n // 2)
        parts.append(_frame(rng, n // 2, pr, out, engine(rng, pr, out, hit_shift=shift), 0.1,
                            version=v))
    # preemptions, TTFT, queue and E2E follow the hit rate in engine(): regressions too
    return pd.concat(parts), {"regressions": frozenset({"kv_cache_hit_rate"}), "benchmark": False,
                              "allowed": frozenset({"kv_cache_hit_rate", "num_preemptions",
                                                    "ttft_ms", "queue_ms", "e2e_ms"})}


def whatif(effect):
    def gen(rng, n):
        """Prompt length confounds hit rate and correctness; the hit rate's own effect on the
        log-odds is `effect` per unit."""
        pr, out = _lengths(rng, n)
        e = engine(rng, pr, out)
        z = np.log(pr) - np.log(1200)
        p = _sig(-2.0 + 0.9 * z + effect * (e["kv_cache_hit_rate"] - 0.5))
        return _frame(rng, n, pr, out, e, p), {"whatif": effect}
    return gen


KINDS = {
    "category_confound": category_confound,
    "long_prompts_weak": long_prompts(0.8),
    "long_prompts_strong": long_prompts(1.8),
    "simpson_evals": simpson("eval"),
    "simpson_versions": simpson("version"),
    "hidden_version": hidden_version,
    "cluster_noise": cluster_noise,
    "cluster_noise_first": cluster_noise_first,
    "realistic": realistic,
    "stale_cache": stale_cache,
    "version_workload": version_workload,
    "version_regression": version_regression,
    "whatif_null": whatif(0.0),
    "whatif_real": whatif(-3.0),
}
#: Cases per dataset at full size (the issue: 1,000-20,000 requests).
SIZES = {"realistic": 20000, "hidden_version": 8000, "cluster_noise": 6000}
DEFAULT_SIZE = 4000


def score(kind: str, seed: int, n: int | None = None) -> dict:
    """One dataset of `kind` (seeded) run through the product; the scores of the module doc."""
    from explorer.core.analysis import Cohort
    from explorer.core.sections import run_all

    rng = np.random.default_rng([seed, sum(map(ord, kind))])
    n = n or SIZES.get(kind, DEFAULT_SIZE)
    df, truth = KINDS[kind](rng, n)
    s = store_of(df, truth.get("benchmark", True))
    try:
        if "regressions" in truth:
            return _score_versions(s, truth)
        if "whatif" in truth:
            return _score_whatif(s, df, truth)
        res = run_all(s, Cohort("A"), SECTIONS)
        mods = set(res["conclusion"].modules)
        want = truth.get("modules", frozenset())
        out = {"named": bool(mods), "found": bool(mods & want) if want else None,
               "wrong": bool(mods - want), "narrative": res["conclusion"].narrative}
        for cl in truth.get("null_clusters", ()):
            out[f"named_{cl}"] = bool(run_all(s, Cohort(cl), SECTIONS)["conclusion"].modules)
        return out
    finally:
        s.close()


def _score_versions(s, truth) -> dict:
    from explorer.core.analysis.versions import WORKLOAD_METRICS, compare_versions
    v = compare_versions(s)
    flagged = {c["metric"] for c in v.changes if c["regression"]} - WORKLOAD_METRICS
    want = truth["regressions"]
    return {"named": bool(flagged), "found": bool(flagged & want) if want else None,
            "wrong": bool(flagged - truth.get("allowed", want)), "flagged": sorted(flagged)}


def _score_whatif(s, df, truth) -> dict:
    from explorer.core.analysis import Cohort
    from explorer.core.analysis.cohort import cohort_frame
    from explorer.core.analysis.whatif import run_whatif
    frame = cohort_frame(s, Cohort("A"))
    res = run_whatif(frame, refute=False)
    bad = frame[frame["grp"] == "bad"].dropna(subset=["kv_cache_hit_rate", "prompt_tokens"])
    b = truth["whatif"]
    # the cohort is every case, so P(bad | hit, prompt) is the generator's own
    z = np.log(bad["prompt_tokens"].to_numpy(float)) - np.log(1200)
    h = bad["kv_cache_hit_rate"].to_numpy(float)
    true = float(np.mean(_sig(-2.0 + 0.9 * z + b * (res.set_value - 0.5))
                         - _sig(-2.0 + 0.9 * z + b * (h - 0.5))))
    return {"named": None, "found": None, "wrong": None,
            "covers": bool(res.ci_low <= true <= res.ci_high), "estimate": res.estimate,
            "truth": true, "ci": (res.ci_low, res.ci_high)}
