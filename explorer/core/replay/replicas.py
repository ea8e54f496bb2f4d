"""The arrival / concurrency model of a calibration: the trace's requests may have been served
by several engine replicas (a benchmark against a deployment of N pods), each seeing only its
share of the arrivals. simulate_replicas replays `replicas` identical engines and merges their
results as if one ReplayResult: requests concatenated (in trace order), counters summed, rates
and means recomputed from the sums and the rows. Routing (ROUTINGS): "round-robin" feeds them in
arrival order (a plain load balancer); "random" picks an engine uniformly at random per request
with a seeded generator (a Kubernetes Service: kube-proxy's iptables mode selects an endpoint at
random, https://kubernetes.io/docs/reference/networking/virtual-ips/; the aibrix "naive"
deployments are such a Service in front of 8 vLLM pods), so a prediction pools a few seeds."""
from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from .engine import simulate
from .model import EngineConfig, ReplayResult, TraceRequest

ROUTINGS = ("round-robin", "random")

_SUMMED = ("requests", "finished", "rejected", "cache_query_blocks", "cache_hit_blocks",
           "evicted_blocks", "preemptions", "steps")


def _mean(s: pd.Series) -> float | None:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.mean()) if len(s) else None


def simulate_replicas(trace: Sequence[TraceRequest], config: EngineConfig, replicas: int = 1,
                      cancelled: Callable[[], bool] | None = None,
                      record_events: bool = False, routing: str = "round-robin",
                      seed: int = 0) -> ReplayResult:
    """simulate() of `replicas` engines with `config`: round-robin puts request j (in arrival
    order) on engine j mod replicas, random on an engine drawn by numpy's default_rng(seed).
    replicas == 1 is simulate() itself. Raises ValueError on an unknown routing."""
    if routing not in ROUTINGS:
        raise ValueError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
    if replicas <= 1:
        return simulate(trace, config, cancelled=cancelled, record_events=record_events)
    order = sorted(range(len(trace)), key=lambda j: trace[j].arrival_s)
    if routing == "random":
        import numpy as np
        pick = np.random.default_rng(seed).integers(replicas, size=len(order))
        parts = [[trace[j] for j, k in zip(order, pick) if k == m] for m in range(replicas)]
    else:
        parts = [[trace[j] for j in order[k::replicas]] for k in range(replicas)]
    res = [simulate(p, config, cancelled=cancelled, record_events=record_events)
           for p in parts if p]
    rq = pd.concat([r.requests for r in res], ignore_index=True).sort_values(
        "arrival_s", kind="stable").reset_index(drop=True)
    ev = pd.concat([r.events for r in res], ignore_index=True)
    s0 = res[0].summary
    summ: dict = {k: int(sum(r.summary[k] for r in res)) for k in _SUMMED}
    pcs = [r.summary.get("prefix_cache") or {} for r in res]
    pc = {k: int(sum(p.get(k, 0) for p in pcs)) for k in pcs[0]}
    info = bool(s0.get("prefix_information"))
    ok = rq["error"].isna()
    summ.update({
        "prefix_information": info,
        "prefix_cache": pc,
        "hit_rate": pc["hits"] / pc["queries"] if info and pc.get("queries") else None,
        "hit_rate_preempted": (pc["preempted_hits"] / pc["preempted_queries"]
                               if info and pc.get("preempted_queries") else None),
        "hit_rate_tokens": (float(rq.loc[ok, "cached_prompt_tokens"].astype(float).sum()
                                  / rq.loc[ok, "prompt_tokens"].sum())
                            if info and rq.loc[ok, "prompt_tokens"].sum() else None),
        "hit_rate_per_request": None,
        "hit_rate_blocks": (summ["cache_hit_blocks"] / summ["cache_query_blocks"]
                            if info and summ["cache_query_blocks"] else None),
        "ttft_ms_mean": _mean(rq.loc[ok, "ttft_ms"]),
        "tpot_ms_mean": _mean(rq.loc[ok, "tpot_ms"]),
        "queue_ms_mean": _mean(rq.loc[ok, "queue_ms"]),
        "e2e_ms_mean": _mean(rq.loc[ok, "e2e_ms"]),
        "makespan_s": max((r.summary["makespan_s"] or 0.0) for r in res),
        "replicas": int(replicas),
        "routing": routing,
    })
    return ReplayResult(requests=rq, events=ev, token_latencies=None, summary=summ,
                        config=config)


def replica_candidates(trace: Sequence[TraceRequest]) -> list[int]:
    """Replica counts a calibration tries: 1, 2, 4, 8, never more than a tenth of the requests."""
    return [k for k in (1, 2, 4, 8) if k == 1 or len(trace) >= 10 * k]

