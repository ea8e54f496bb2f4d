"""The arrival / concurrency model of a calibration: the trace's requests may have been served
by several engine replicas (a benchmark against a deployment of N pods), each seeing only its
share of the arrivals. simulate_replicas replays `replicas` identical engines and merges their
results as if one ReplayResult: requests concatenated (in trace order), counters summed, rates
and means recomputed from the sums and the rows. Routing (ROUTINGS): "round-robin" feeds them in
arrival order (a plain load balancer); "random" picks an engine uniformly at random per request
with a seeded generator (a Kubernetes Service: kube-proxy's iptables mode selects an endpoint at
random, https://kubernetes.io/docs/reference/networking/virtual-ips/; the aibrix "naive"
deployments are such a Service in front of 8 vLLM pods), so a prediction pools a few seeds.
"connection" is what such a Service really does with a keep-alive client: kube-proxy picks
the endpoint per TCP *connection* (iptables mode: at random), and an HTTP/1.1 client reuses an
idle connection for the next request. The aibrix ps-experiment client (production-stack
benchmarks/multi-round-qa, one shared openai.AsyncOpenAI, i.e. one httpx pool) takes the first
idle connection in creation order (httpcore ConnectionPool._assign_requests_to_connections) and
closes one idle for more than KEEPALIVE_S (httpx Limits.keepalive_expiry, default 5 s,
https://www.python-httpx.org/advanced/resource-limits); a request finding no idle connection
opens one, to an engine drawn at random. Which connection is idle depends on when requests
finish, so the routing is iterated to a fixed point with the replay's own finish times
(CONNECTION_ITERATIONS at most; the first pass routes at random per request).
"connection-rr" is the same with kube-proxy in IPVS mode, whose default scheduler gives each
new connection the next endpoint in turn (round-robin, "rr": https://kubernetes.io/docs/
reference/networking/virtual-ips/#proxy-mode-ipvs); which mode a cluster runs is not in a
benchmark's files, so validate.py replays both as the interval of that unknown."""
from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from .engine import simulate
from .model import EngineConfig, ReplayResult, TraceRequest

ROUTINGS = ("round-robin", "random", "connection", "connection-rr")
#: idle keep-alive connections older than this are closed by the client (httpx default)
KEEPALIVE_S = 5.0
#: routing passes of "connection" routing at most (it stops earlier when the routes repeat)
CONNECTION_ITERATIONS = 4

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
    order) on engine j mod replicas, random on an engine drawn by numpy's default_rng(seed),
    connection per keep-alive connection (connection_routes, module doc). replicas == 1 is simulate() itself. Raises ValueError on an unknown routing."""
    if routing not in ROUTINGS:
        raise ValueError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
    if replicas <= 1:
        return simulate(trace, config, cancelled=cancelled, record_events=record_events)
    import numpy as np
    order = sorted(range(len(trace)), key=lambda j: trace[j].arrival_s)
    if routing in ("round-robin", "connection-rr"):
        pick = [k % replicas for k in range(len(order))]
    else:
        pick = list(np.random.default_rng(seed).integers(replicas, size=len(order)))
    res = _run(trace, order, pick, replicas, config, cancelled, record_events)
    if routing in ("connection", "connection-rr"):
        arrival = [trace[j].arrival_s for j in order]
        for _i in range(CONNECTION_ITERATIONS):
            fin = _finish_times(res, [trace[j].request_id for j in order], arrival)
            new = connection_routes(arrival, fin, replicas, np.random.default_rng(seed),
                                    new_connection="round-robin" if routing == "connection-rr"
                                    else "random")
            if new == pick:
                break
            pick = new
            res = _run(trace, order, pick, replicas, config, cancelled, record_events)
    res = [r for r in res if r is not None]
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


def _run(trace, order, pick, replicas, config, cancelled, record_events) -> list:
    """simulate() of each engine's share (None for an engine that got no request)."""
    parts = [[trace[j] for j, k in zip(order, pick) if k == m] for m in range(replicas)]
    return [simulate(p, config, cancelled=cancelled, record_events=record_events) if p else None
            for p in parts]


def _finish_times(res: list, ids: list[str], arrival: list[float]) -> list[float]:
    """Each request's finish (arrival + E2E, s) in the replay; an unfinished one never frees
    its connection."""
    rq = pd.concat([r.requests for r in res if r is not None], ignore_index=True)
    e2e = dict(zip(rq["request_id"].astype(str), pd.to_numeric(rq["e2e_ms"], errors="coerce")))
    out = []
    for rid, a in zip(ids, arrival):
        e = e2e.get(str(rid))
        out.append(a + e / 1000.0 if e is not None and e == e else float("inf"))
    return out


def connection_routes(arrival: Sequence[float], finish: Sequence[float], replicas: int, rng,
                      keepalive_s: float = KEEPALIVE_S,
                      new_connection: str = "random") -> list[int]:
    """The engine of each request (in arrival order) under per-connection routing: the first
    idle connection (creation order) not idle for more than keepalive_s carries it, else a new
    connection, to the engine rng.integers(replicas) draws (new_connection "random": kube-proxy
    iptables mode) or to the next engine in turn ("round-robin": IPVS mode's rr scheduler).
    finish: when each request frees its connection (s)."""
    conns: list[list] = []          # [engine, free_at]
    out = []
    opened = 0
    for a, f in zip(arrival, finish):
        conns = [c for c in conns if not (c[1] <= a and a - c[1] > keepalive_s)]
        c = next((c for c in conns if c[1] <= a), None)
        if c is None:
            eng = opened % replicas if new_connection == "round-robin" else int(rng.integers(replicas))
            opened += 1
            c = [eng, a]
            conns.append(c)
        c[1] = f
        out.append(c[0])
    return out


def replica_candidates(trace: Sequence[TraceRequest]) -> list[int]:
    """Replica counts a calibration tries: 1, 2, 4, 8, never more than a tenth of the requests."""
    return [k for k in (1, 2, 4, 8) if k == 1 or len(trace) >= 10 * k]

