"""Replay results beside the observed run, and a sweep over KV-cache capacity (Qt-free; the
replay panel and reports paint these)."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

from .engine import simulate
from .model import Cancelled, EngineConfig, TraceRequest

NO_PREFIX = "no prefix information in this trace (no hash_ids): hit rates not meaningful"

# (summary key, observed SQL aggregate over the run's requests, label, unit)
METRICS = (
    ("hit_rate_tokens", "sum(cached_prompt_tokens) / nullif(sum(CASE WHEN cached_prompt_tokens "
                        "IS NOT NULL THEN prompt_tokens END), 0)",
     "prompt tokens served from cache", ""),
    ("hit_rate_per_request", "avg(kv_cache_hit_rate)", "served from cache, mean per request", ""),
    ("hit_rate_blocks", "NULL", "hit_rate_blocks (vLLM-style, counted per scheduling attempt)", ""),
    ("preemptions", "sum(num_preemptions)", "preemptions", ""),
    ("ttft_ms_mean", "avg(ttft_ms)", "TTFT mean", "ms"),
    ("tpot_ms_mean", "avg(tpot_ms)", "TPOT mean", "ms/token"),
    ("queue_ms_mean", "avg(queue_ms)", "queue time mean", "ms"),
    ("e2e_ms_mean", "avg(e2e_ms)", "E2E mean", "ms"),
)


def hit_rate_lines(summary: dict) -> list[str]:
    """The prefix-cache lines of a replay summary, for the CLI text and the replay panel: first
    the capacity-comparable figures (hit_rate_tokens, the share of prompt tokens served from the
    cache, and hit_rate_per_request, its mean per request: each request counted once, at its
    first admission), then hit_rate_blocks explained as vLLM's per-scheduling-attempt count;
    or [NO_PREFIX-sentence] when summary["prefix_information"] is False."""
    if not summary.get("prefix_information", True):
        return [f"prefix cache: {NO_PREFIX}"]

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"
    return [f"prompt tokens served from the prefix cache: {pct(summary.get('hit_rate_tokens'))} "
            f"(mean per request {pct(summary.get('hit_rate_per_request'))}; each request counted "
            "once, comparable across capacities)",
            f"hit_rate_blocks {pct(summary.get('hit_rate_blocks'))}: vLLM-style, counted per "
            "scheduling attempt (a blocked or preempted request re-queries its own blocks, so a "
            "small cache can score higher; do not compare it across capacities)"]


def replayable_runs(store):
    """Runs whose requests have arrival times and prompt lengths: DataFrame(run_id, label, n),
    observed runs first."""
    return store.df(
        "SELECT r.run_id, coalesce(r.label, r.run_id) AS label, count(*) AS n "
        "FROM runs r JOIN requests q ON q.run_id = r.run_id "
        "WHERE q.arrival_s IS NOT NULL AND q.prompt_tokens IS NOT NULL "
        "GROUP BY r.run_id, r.label, r.simulated "
        "ORDER BY coalesce(r.simulated, false), r.run_id")


def observed_summary(store, run_id: str) -> dict:
    """The observed run's figures under the replay summary's keys (None where the trace did not
    record the metric), plus "requests"."""
    sel = ", ".join(f"{sql} AS {key}" for key, sql, _, _ in METRICS)
    row = store.df(f"SELECT count(*) AS requests, {sel} FROM requests WHERE run_id = ?", [run_id])
    out = {}
    for k, v in row.iloc[0].items():
        out[k] = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
    out["requests"] = int(out["requests"] or 0)
    return out


def comparison_rows(observed: dict, replay: dict) -> list[dict]:
    """One row per metric: {metric, label, unit, observed, replay, diff_pct} (None when unknown)."""
    rows = []
    for key, _, label, unit in METRICS:
        o, r = observed.get(key), replay.get(key)
        diff = None
        if o is not None and r is not None and o != 0:
            diff = 100.0 * (r - o) / abs(o)
        rows.append({"metric": key, "label": label, "unit": unit, "observed": o, "replay": r,
                     "diff_pct": diff})
    return rows


def default_capacities(trace: Sequence[TraceRequest], block_size: int, points: int = 6,
                       include: int | None = None) -> list[int]:
    """Capacities (blocks) for a sweep: geometric from the 90th percentile of one request's
    need (prompt + output; larger requests are rejected at the smallest capacities) up to the
    blocks of all prompts together (beyond which nothing more can be cached); `include` (e.g.
    the capacity being looked at) is added."""
    if not trace:
        return []
    needs = sorted(-(-(t.prompt_tokens + t.output_tokens) // block_size) for t in trace)
    total = sum(-(-t.prompt_tokens // block_size) for t in trace)
    lo = max(1, needs[int(0.9 * (len(needs) - 1))])
    hi = max(lo + 1, total)
    caps = {lo, hi}
    if points > 2:
        r = (hi / lo) ** (1 / (points - 1))
        caps |= {int(round(lo * r ** i)) for i in range(1, points - 1)}
    if include:
        caps.add(int(include))
    return sorted(caps)


def sweep_capacity(trace: Sequence[TraceRequest], config: EngineConfig,
                   capacities: Sequence[int | None],
                   progress: Callable[[int, int], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> list[dict]:
    """Replay the trace once per capacity (blocks; None = infinite), other settings from
    `config`. Returns [{num_gpu_blocks, **summary}] in the order given. progress(done, total)
    counts finished replays; raises Cancelled."""
    out = []
    n = len(capacities)
    for i, cap in enumerate(capacities):
        if cancelled is not None and cancelled():
            raise Cancelled("sweep cancelled")
        if progress is not None:
            progress(i, n)
        res = simulate(trace, replace(config, num_gpu_blocks=cap), cancelled=cancelled,
                       record_events=False)
        out.append({"num_gpu_blocks": cap, **res.summary})
    if progress is not None:
        progress(n, n)
    return out
