"""Benchmark: how often the conclusion names an engine module on NULL data (answer correctness
independent of every engine metric) and on PLANTED data (one cluster's badcases caused by a low
KV-cache hit rate and preemptions).

    .venv/bin/python bench/conclusion_null.py [--null 200] [--planted 50] [--seed 0]

Each dataset: 2,000 eval cases bound to the requests of two engine releases (0.5.2 -> 0.6.1, a
real regression between them: lower hit rate, more preemptions and queueing on 0.6.1, so the
version findings are exercised too), about 12% badcases in 3 clusters. The engine metrics are
correlated as in a server (preemptions rise as the hit rate falls, TTFT = queue + prefill grows
with the prompt, TPOT with the batch, E2E = TTFT + TPOT x output tokens).
Null: correct ~ Bernoulli(0.88), independent of everything; clusters drawn at random.
Planted: as null, plus cluster "A" gains badcases with risk logit(-2.8 - 3 (hit - 0.5) + 0.5
preemptions), a moderate effect (the demo's planted cluster is stronger).
The conclusion (run_all: cohort, comparison, tree, versions, conclusion) runs on cluster A
(the largest, the app's default) and on every cluster; a dataset "names a module" when
Conclusion.modules is not empty. Target: null <= 5%, planted >= 95% (cluster A).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.core.analysis import Cohort  # noqa: E402
from explorer.core.sections import run_all  # noqa: E402
from explorer.core.store import Store  # noqa: E402

N_CASES = 2000
SECTIONS = {"sections": ["cohort", "comparison", "tree", "versions", "conclusion"]}


def dataset(seed: int, planted: bool) -> Store:
    rng = np.random.default_rng(seed)
    n = N_CASES
    newer = rng.random(n) < 0.5
    prompt = rng.integers(200, 4000, n)
    output = rng.integers(20, 600, n)
    hit = np.clip(rng.beta(4, 3, n) - 0.12 * newer, 0, 1)
    pre = rng.poisson(0.15 + 0.6 * (1 - hit) + 0.2 * newer)
    batch = rng.integers(1, 48, n).astype(float)
    tpot = 10 + 0.35 * batch + rng.normal(0, 2, n)
    queue = rng.exponential(60 + 40 * newer + 30 * pre)
    ttft = queue + 0.05 * prompt * (1 - hit) + rng.exponential(40, n)
    e2e = ttft + tpot * output
    bad = rng.random(n) < 0.12
    cluster = np.where(bad, rng.choice(["A", "B", "C"], n, p=[0.45, 0.3, 0.25]), None)
    if planted:
        risk = 1 / (1 + np.exp(-(-2.8 - 3 * (hit - 0.5) + 0.5 * pre)))
        extra = ~bad & (rng.random(n) < risk)
        bad |= extra
        cluster = np.where(extra, "A", cluster)
    s = Store()
    run = np.where(newer, "new", "old")
    s.add_run("old", engine_version="0.5.2", benchmark="maths")
    s.add_run("new", engine_version="0.6.1", benchmark="maths")
    ids = np.char.add("q", np.arange(n).astype(str))
    s.append("requests", pd.DataFrame({
        "run_id": run, "request_id": ids, "arrival_s": np.arange(n) * 0.5,
        "prompt_tokens": prompt, "completion_tokens": output, "kv_cache_hit_rate": hit,
        "num_preemptions": pre, "batch_size": batch, "tpot_ms": tpot, "queue_ms": queue,
        "ttft_ms": ttft, "e2e_ms": e2e, "finish_reason": "stop"}))
    s.append("cases", pd.DataFrame({"case_id": ids, "eval_id": "e", "category": "maths",
                                    "correct": ~bad, "cluster": cluster,
                                    "prompt_tokens": prompt, "completion_tokens": output}))
    s.append("case_links", pd.DataFrame({"case_id": ids, "run_id": run, "request_id": ids,
                                         "level": 1, "score": 1.0}))
    return s


def names_module(seed: int, planted: bool) -> dict:
    """{cluster: the conclusion names a module, "d": cluster A's Cohen's d of the hit rate}."""
    s = dataset(seed, planted)
    out = {}
    try:
        for cl in ("A", "B", "C"):
            res = run_all(s, Cohort(cl), SECTIONS)
            out[cl] = bool(res["conclusion"].modules)
            if cl == "A":
                out["d"] = res["comparison"].row("kv_cache_hit_rate").cohens_d
    finally:
        s.close()
    return out


def wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint
    return proportion_confint(k, n, method="wilson")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--null", type=int, default=200)
    ap.add_argument("--planted", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t = time.perf_counter()
    out = {}

    def line(kind, what, k, count, unit="datasets"):
        lo, hi = wilson(k, count)
        out[(kind, what)] = k / count
        print(f"{kind:8s} {what:26s}: a module is named in {k:4d} of {count:4d} {unit} "
              f"({k / count:.1%}, 95% Wilson CI {lo:.1%} to {hi:.1%})")

    res = {kind: [names_module(a.seed + off + i, kind == "planted") for i in range(count)]
           for kind, count, off in (("null", a.null, 0), ("planted", a.planted, 100_000))}
    for kind, rs in res.items():
        line(kind, "cluster A", sum(r["A"] for r in rs), len(rs))
        print(f"{'':8s} (cluster A's Cohen's d of the KV-cache hit rate: median "
              f"{np.median([r['d'] for r in rs]):+.2f})")
    null_cohorts = [r[c] for r in res["null"] for c in "ABC"] + \
        [r[c] for r in res["planted"] for c in "BC"]
    line("null", "every null cohort", sum(null_cohorts), len(null_cohorts), "cohorts")
    line("null", "any of a dataset's 3", sum(any(r[c] for c in "ABC") for r in res["null"]),
         len(res["null"]))
    print(f"({time.perf_counter() - t:.0f} s)")
    ok = out[("null", "cluster A")] <= 0.05 and out[("planted", "cluster A")] >= 0.95
    print("target (null <= 5%, planted >= 95%, cluster A):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
