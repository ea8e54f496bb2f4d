"""Benchmark and fit report of the demo workload (explorer.demo).

1. The synthetic Mooncake-style trace against the real conversation trace
   (../shared/data/real/mooncake/conversation_trace.jsonl, read in place when present): request
   rate, inter-arrival coefficient of variation, prompt / output length quantiles, share of
   reused prefix blocks, side by side (the numbers behind explorer.demo.trace.FIT).
2. load_demo wall time: cold (trace + two engine replays + cases + binding, no cache) and warm
   (from the on-disk cache, written to a temporary folder here).
3. What the two engine versions look like in the store (mean KV-cache hit rate, preemptions,
   TTFT), and the hit rate of the same trace under each eviction policy at the newer version's
   pool size (the policy alone moves it little on this trace: the pool size does the work).

Run: .venv/bin/python bench/demo.py [--requests N] [--seed S]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.core.replay import EngineConfig, TraceRequest, simulate  # noqa: E402
from explorer.core.store import Store  # noqa: E402
from explorer.demo import load_demo, workload  # noqa: E402
from explorer.demo.trace import synthesize_trace  # noqa: E402

REAL = ROOT.parent / "shared" / "data" / "real" / "mooncake" / "conversation_trace.jsonl"
Q = [0.1, 0.25, 0.5, 0.75, 0.9]


def stats(ts_ms, n_in, n_out, hash_ids) -> dict:
    ts = np.asarray(ts_ms, dtype=float)
    gaps = np.diff(ts)
    seen, reused, total = set(), 0, 0
    for h in hash_ids:
        for x in h:
            total += 1
            reused += x in seen
            seen.add(x)
    return {"requests": len(ts), "rate_per_s": round(len(ts) / (ts[-1] / 1000.0), 3),
            "interarrival_cv": round(float(gaps.std() / gaps.mean()), 3),
            "input_q10_25_50_75_90": np.quantile(n_in, Q).round().astype(int).tolist(),
            "output_q10_25_50_75_90": np.quantile(n_out, Q).round().astype(int).tolist(),
            "reused_block_share": round(reused / total, 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=workload.N_REQUESTS)
    ap.add_argument("--seed", type=int, default=workload.SEED)
    args = ap.parse_args()

    if REAL.exists():
        rows = [json.loads(x) for x in REAL.open(encoding="utf-8") if x.strip()]
        real = stats([r["timestamp"] for r in rows], [r["input_length"] for r in rows],
                     [r["output_length"] for r in rows], [r["hash_ids"] for r in rows])
        t = time.perf_counter()
        syn = synthesize_trace(len(rows), args.seed)
        gen_s = time.perf_counter() - t
        synth = stats(syn.timestamp, syn.input_length, syn.output_length, syn.hash_ids)
        print(f"trace statistics (synthetic: {len(rows)} requests generated in {gen_s:.2f} s)")
        for k in real:
            print(f"  {k:24s} real {str(real[k]):36s} synthetic {synth[k]}")
    else:
        print(f"(real Mooncake trace not found at {REAL}: skipping the side-by-side)")

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRACE_EXPLORER_CACHE"] = tmp
        times = {}
        for what, cache in (("cold, no cache", False), ("first, writes cache", True),
                            ("warm, from cache", True)):
            s = Store()
            t = time.perf_counter()
            reports = load_demo(s, seed=args.seed, n_requests=args.requests, use_cache=cache)
            times[what] = time.perf_counter() - t
            assert not [r.error for r in reports if r.error], reports
        print(f"load_demo, {args.requests} requests x 2 versions:")
        for k, v in times.items():
            print(f"  {k:22s} {v:6.2f} s")
        print(s.df("""
            SELECT u.engine_version, count(*) AS requests,
                   round(avg(r.kv_cache_hit_rate), 3) AS hit_rate,
                   round(avg(r.num_preemptions), 3) AS preemptions_per_req,
                   round(avg((r.num_preemptions > 0)::INT), 3) AS share_preempted,
                   round(avg(r.ttft_ms)) AS ttft_ms, round(avg(r.tpot_ms), 2) AS tpot_ms
            FROM requests r JOIN runs u USING (run_id) GROUP BY 1 ORDER BY 1""").to_string(index=False))
        print(s.df("""
            SELECT e.eval_id, count(*) AS cases, round(avg((NOT c.correct)::INT), 3) AS wrong,
                   round(avg(coalesce(c.cluster = '计算题中间步骤出错', false)::INT), 3) AS planted
            FROM cases c JOIN evals e USING (eval_id) GROUP BY 1 ORDER BY 1""").to_string(index=False))
        print(s.df("SELECT level, count(*) AS links FROM case_links GROUP BY 1 ORDER BY 1")
              .to_string(index=False))

    syn = synthesize_trace(args.requests, args.seed)
    reqs = [TraceRequest(f"r{i}", t / 1000.0, int(a), int(b), tuple(h))
            for i, (t, a, b, h) in enumerate(zip(syn.timestamp, syn.input_length,
                                                  syn.output_length, syn.hash_ids))]
    blocks = workload.VERSIONS[workload.NEW]["num_gpu_blocks"]
    print(f"eviction policy at {blocks} blocks (same trace):")
    for policy in ("lru", "fifo", "lfu"):
        t = time.perf_counter()
        res = simulate(reqs, EngineConfig(num_gpu_blocks=blocks, eviction=policy))
        rq = res.requests
        print(f"  {policy:5s} hit rate {rq.kv_cache_hit_rate.mean():.3f}  preemptions "
              f"{int(rq.num_preemptions.sum()):4d}  ({time.perf_counter() - t:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
