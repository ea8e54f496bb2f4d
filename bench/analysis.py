"""Benchmark: the whole analysis (run_all: cohort, comparison, tree, heatmap, versions, SLA,
conclusion; no causal what-if) on a synthetic store of 1M requests and 100k bound cases.

    .venv/bin/python bench/analysis.py [--requests 1000000] [--cases 100000] [--repeat 3]

Target: under 1.5 s once loaded (imports warmed up by a first run, which is reported apart).
Prints the load time, the cold run, then per repeat the total and each section's time.

Then --changes N cluster changes (alternating over the store's clusters), timing the core calls
the GUI session makes per change (explorer/session.py analyse: cohort_frame once, then
summarize_cohort, compare_metrics, fit_tree on that frame; heatmap / versions / SLA are cached
by the session across clusters and timed once): p50 / p95 per call, and the uncached cohort SQL
(cohort_frame(..., cached=False)) for comparison.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.core.analysis import Cohort  # noqa: E402
from explorer.core.sections import run_all  # noqa: E402
from explorer.core.store import Store  # noqa: E402


def build(n_req: int, n_cases: int, seed: int = 0) -> Store:
    rng = np.random.default_rng(seed)
    s = Store()
    runs = [("run-a", "0.5.2"), ("run-b", "0.6.1")]
    for rid, v in runs:
        s.add_run(rid, engine_version=v, benchmark="bench", engine="vllm")
    half = n_req // 2
    run_ids = np.where(np.arange(n_req) < half, "run-a", "run-b")
    newer = run_ids == "run-b"
    hit = np.clip(rng.beta(4, 3, n_req) - 0.15 * newer, 0, 1)
    pre = rng.poisson(0.3 + 0.4 * newer)
    bs = rng.integers(1, 64, n_req).astype(float)
    tpot = 8 + 0.4 * bs + rng.normal(0, 2, n_req)
    queue = rng.exponential(80 + 60 * newer)
    ttft = queue + rng.exponential(150, n_req)
    comp = rng.integers(16, 800, n_req)
    req = pd.DataFrame({
        "run_id": run_ids, "request_id": np.char.add("q", np.arange(n_req).astype(str)),
        "arrival_s": np.r_[np.sort(rng.uniform(0, 3600, half)), np.sort(rng.uniform(0, 3600, n_req - half))],
        "prompt_tokens": rng.integers(64, 8000, n_req), "completion_tokens": comp,
        "kv_cache_hit_rate": hit, "num_preemptions": pre, "batch_size": bs, "tpot_ms": tpot,
        "ttft_ms": ttft, "queue_ms": queue, "e2e_ms": ttft + tpot * comp,
        "finish_reason": np.where(rng.random(n_req) < 0.03, "length", "stop"),
        "tenant": rng.choice(["t1", "t2", "t3", "t4"], n_req)})
    s.append("requests", req)
    pick = rng.choice(n_req, n_cases, replace=False)
    risk = 1 / (1 + np.exp(-(-2.5 - 3 * (hit[pick] - 0.5) + 0.8 * pre[pick])))
    bad = rng.random(n_cases) < risk
    cats = rng.choice(["algebra", "geometry", "arithmetic"], n_cases)
    cases = pd.DataFrame({"case_id": np.char.add("c", np.arange(n_cases).astype(str)),
                          "eval_id": "e", "category": cats, "correct": ~bad,
                          "cluster": np.where(bad, np.where(rng.random(n_cases) < 0.7, "kv", "other"), None),
                          "prompt_tokens": req["prompt_tokens"].to_numpy()[pick]})
    s.append("cases", cases)
    s.append("case_links", pd.DataFrame({"case_id": cases["case_id"], "run_id": run_ids[pick],
                                         "request_id": req["request_id"].to_numpy()[pick], "level": 1,
                                         "score": 1.0}))
    return s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--changes", type=int, default=20)
    a = ap.parse_args()
    t = time.perf_counter()
    store = build(a.requests, a.cases)
    print(f"built store: {a.requests:,} requests, {a.cases:,} cases in {time.perf_counter() - t:.1f} s")
    cohort = Cohort("kv")
    t = time.perf_counter()
    res = run_all(store, cohort)
    print(f"cold run (imports scipy / sklearn): {time.perf_counter() - t:.2f} s")
    bad = {k: v.reason for k, v in res.items() if hasattr(v, "reason")}
    if bad:
        print("sections without a result:", bad)
    totals = []
    for i in range(a.repeat):
        marks = []
        t0, c0 = time.perf_counter(), time.process_time()
        run_all(store, cohort, progress=lambda d, n, name: marks.append(
            (name, time.perf_counter(), time.process_time())))
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        totals.append((total, cpu))
        parts = ", ".join(f"{marks[j][0]} {marks[j + 1][1] - marks[j][1]:.2f}/"
                          f"{marks[j + 1][2] - marks[j][2]:.2f}" for j in range(len(marks) - 1))
        print(f"run {i + 1}: wall {total:.2f} s, CPU {cpu:.2f} s (section wall/CPU s: {parts})")
    best = min(totals)
    print(f"best wall {best[0]:.2f} s (CPU of all threads {best[1]:.2f} s), target < 1.5 s; "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    c = res["comparison"]
    print("kv_cache_hit_rate adjusted p:", c.row("kv_cache_hit_rate").p_adjusted,
          "| tree:", res["tree"].sentence)
    if a.changes:
        cluster_changes(store, a.changes)
    return 0


def cluster_changes(store, n: int) -> None:
    """Time the per-cluster-change core calls (see the module doc); prints p50 / p95 in ms."""
    from explorer.core.analysis import (cluster_table, cohort_frame, compare_metrics, conclude,
                                        fit_tree, summarize_cohort)
    names = [r["cluster"] for r in cluster_table(store)]
    times: dict[str, list[float]] = {}

    def timed(key, fn):
        t = time.perf_counter()
        r = fn()
        times.setdefault(key, []).append((time.perf_counter() - t) * 1000)
        return r
    for i in range(n):
        c = Cohort(names[i % len(names)])
        t0 = time.perf_counter()
        frame = timed("cohort_frame", lambda: cohort_frame(store, c))
        out = {"cohort": timed("summarize_cohort", lambda: summarize_cohort(store, c, frame=frame)),
               "comparison": timed("compare_metrics", lambda: compare_metrics(store, c, frame=frame)),
               "tree": timed("fit_tree", lambda: fit_tree(store, c, frame=frame))}
        timed("conclude", lambda: conclude(out))
        times.setdefault("per change (sum)", []).append((time.perf_counter() - t0) * 1000)
        timed("cohort_frame uncached", lambda: cohort_frame(store, c, cached=False))
    print(f"{n} cluster changes over {names} (ms):")
    for k, v in times.items():
        print(f"  {k:22s} p50 {np.percentile(v, 50):7.1f}  p95 {np.percentile(v, 95):7.1f}")


if __name__ == "__main__":
    sys.exit(main())
