"""A seeded serving trace for the SLA diagnosis, with or without a planted KV-cache collapse.

The model (every number below is a parameter of `synthesize`; none is fitted to a real trace):

* Requests arrive as a Poisson process (rate_rps) over `minutes`, on a unix clock from T0, from
  four tenants (shares TENANTS). Prompts are log-normal (median 1,000 tokens), a share `hit`
  of each prompt is served from the prefix cache (Beta(7, 3): mean 0.7), the rest is
  prefilled at 0.4 ms/token; queue delay is exponential (mean 30 ms); TTFT = queue + 20 ms +
  prefill; TPOT ~ Normal(30 + 0.3 (batch - 16), 3) ms/token, batch ~ Poisson(16);
  E2E = TTFT + TPOT x completion tokens. Errors: a random 0.15 % of requests fail ("HTTP 500")
  everywhere, so some windows break the 0.5 % error budget by chance (the null's failures).
* collapse=True: from minute collapse_at for collapse_minutes, tenant COLLAPSE_TENANT's requests
  carry long unique prompts (median 6,000 tokens, hit ~0.02), which evict the others' cached
  prefixes (their hit falls to Beta(1, 9): mean 0.1) and fill the KV cache; nothing else
  changes (queue, batches, TPOT, the request rate stay as they were), so only the KV-cache step,
  the tenant and the prompt-length mix (a workload change) may be named.
  collapse=False: the same trace without it (tenant acme's prompts as everyone's).
* The engine's samples every 10 s (engine_stats, same unix clock: running, waiting, KV usage,
  prefix-cache hit rate) follow the requests of the last 10 s.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

T0 = 1_760_000_000.0
TENANTS = {"acme": 0.15, "globex": 0.35, "initech": 0.3, "umbrella": 0.2}
COLLAPSE_TENANT = "acme"


def synthesize(seed: int = 0, collapse: bool = True, minutes: float = 40.0, rate_rps: float = 4.0,
               collapse_at: float = 20.0, collapse_minutes: float = 8.0
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(requests, engine_stats) frames in the store's canonical columns (see the module doc)."""
    rng = np.random.default_rng(seed)
    dur = minutes * 60
    n = rng.poisson(rate_rps * dur)
    t = np.sort(rng.uniform(0, dur, n))
    tenant = rng.choice(list(TENANTS), n, p=list(TENANTS.values()))
    lo, hi = collapse_at * 60, (collapse_at + collapse_minutes) * 60
    in_c = collapse & (t >= lo) & (t < hi)
    long_ = in_c & (tenant == COLLAPSE_TENANT)
    prompt = np.where(long_, rng.lognormal(np.log(6000), 0.3, n), rng.lognormal(np.log(1000), 0.5, n))
    prompt = np.maximum(16, prompt.round()).astype(int)
    hit = np.where(long_, rng.beta(1, 40, n), np.where(in_c, rng.beta(1, 9, n), rng.beta(7, 3, n)))
    cached = np.floor(hit * prompt).astype(int)
    queue = rng.exponential(30.0, n)
    prefill = 20 + 0.4 * (prompt - cached) + rng.normal(0, 5, n).clip(-15, 15)
    batch = rng.poisson(16, n).astype(float)
    tpot = rng.normal(30 + 0.3 * (batch - 16), 3.0).clip(5)
    completion = rng.integers(50, 400, n)
    preempt = np.zeros(n, dtype=int)
    err = rng.random(n) < 0.0015
    ttft = queue + prefill
    e2e = ttft + tpot * completion
    req = pd.DataFrame({
        "run_id": "sla-demo", "request_id": [f"r{i}" for i in range(n)], "arrival_s": T0 + t,
        "prompt_tokens": prompt, "completion_tokens": completion, "cached_prompt_tokens": cached,
        "kv_cache_hit_rate": cached / prompt, "ttft_ms": ttft, "tpot_ms": tpot, "e2e_ms": e2e,
        "queue_ms": queue, "prefill_ms": prefill, "num_preemptions": preempt,
        "batch_size": batch, "error": np.where(err, "HTTP 500", None), "tenant": tenant})
    for c in ("ttft_ms", "tpot_ms", "e2e_ms"):
        req.loc[err, c] = np.nan
    ts = np.arange(10.0, dur + 10, 10.0)
    idx = np.searchsorted(t, ts)
    prev = np.searchsorted(t, ts - 10)
    rows = []
    for s, a, b in zip(ts, prev, idx):
        c = bool(collapse and lo <= s < hi + 10)
        rows.append({"ts_s": T0 + s, "running": float(b - a) * 1.6 + rng.normal(0, 1),
                     "waiting": max(0.0, rng.normal(1, 1)),
                     "kv_usage_gpu": float(np.clip(rng.normal(0.97 if c else 0.55, 0.03), 0, 1)),
                     "prefix_cache_hit_rate": float(hit[a:b].mean()) if b > a else None,
                     "num_preemptions": float(preempt[a:b].sum())})
    stats = pd.DataFrame(rows)
    stats["run_id"] = "sla-demo-engine"
    return req, stats


def load(store, seed: int = 0, collapse: bool = True, **kw) -> None:
    """Adds the trace (run sla-demo) and the engine's samples (run sla-demo-engine, a unix
    clock) to `store`, both marked simulated."""
    req, stats = synthesize(seed, collapse, **kw)
    store.add_run("sla-demo", engine="vllm", model="demo-8b", simulated=True)
    store.add_run("sla-demo-engine", engine="vllm", model="demo-8b", simulated=True,
                  config={"clock": "unix (sample timestamps)"})
    store.append("requests", req)
    store.append("engine_stats", stats)
