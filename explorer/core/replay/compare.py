"""Replay results beside the observed run, and a sweep over KV-cache capacity (Qt-free; the
replay panel and reports paint these)."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

from .engine import simulate
from ..errors import Cancelled
from .model import EngineConfig, TraceRequest
from explorer.core.i18n import N_, _

NO_PREFIX = N_("no prefix information in this trace (no hash_ids): hit rates not meaningful")

# (summary key, observed SQL aggregate over the run's requests, label, unit)
METRICS = (
    ("hit_rate", "sum(cached_prompt_tokens) / nullif(sum(CASE WHEN cached_prompt_tokens "
                 "IS NOT NULL THEN prompt_tokens END), 0)",
     N_("prefix-cache hit rate (first-query tokens)"), ""),
    ("hit_rate_per_request", "avg(kv_cache_hit_rate)", N_("served from cache, mean per request"), ""),
    ("hit_rate_blocks", "NULL", N_("block hit rate per scheduling attempt (older count)"), ""),
    ("preemptions", "sum(num_preemptions)", N_("preemptions"), ""),
    ("ttft_ms_mean", "avg(ttft_ms)", N_("TTFT mean"), "ms"),
    ("tpot_ms_mean", "avg(tpot_ms)", N_("TPOT mean"), "ms/token"),
    ("queue_ms_mean", "avg(queue_ms)", N_("scheduling delay mean"), "ms"),
    ("e2e_ms_mean", "avg(e2e_ms)", N_("E2E mean"), "ms"),
)


def hit_rate_lines(summary: dict) -> list[str]:
    """The prefix-cache lines of a replay summary, for the CLI text and the replay panel: first
    the headline, vLLM's own hit rate (prefix_cache_hits / prefix_cache_queries, in tokens, over
    first queries; summary["hit_rate"]) with the per-request mean, then the preempted requests'
    re-queries, which vLLM counts apart (summary["prefix_cache"]), then hit_rate_blocks explained
    as the older per-attempt count; or [NO_PREFIX-sentence] when summary["prefix_information"]
    is False."""
    if not summary.get("prefix_information", True):
        return [_("prefix cache: {NO_PREFIX}").format(NO_PREFIX=_(NO_PREFIX))]

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"
    head = summary.get("hit_rate", summary.get("hit_rate_tokens"))
    pc = summary.get("prefix_cache") or {}
    lines = [_("prefix-cache hit rate {head} of first-query tokens (vLLM's prefix_cache_hits "
             "/ prefix_cache_queries; mean per request {hit_rate_per_request}"
             "; comparable across capacities)").format(head=pct(head), hit_rate_per_request=pct(summary.get('hit_rate_per_request')))]
    if pc.get("preempted_requests"):
        lines.append(_("preempted requests re-queried {preempted_queries:,} tokens "
                     "{preempted_requests:,} times, {hit_rate_preempted} "
                     "hit (mostly their own blocks): counted apart, as vLLM does").format(preempted_queries=pc['preempted_queries'], preempted_requests=pc['preempted_requests'], hit_rate_preempted=pct(summary.get('hit_rate_preempted'))))
    lines.append(_("hit_rate_blocks {hit_rate_blocks}: older per-attempt "
                 "block count (blocked and preempted requests re-query their own blocks, so a "
                 "small cache can score higher; do not compare it across capacities)").format(hit_rate_blocks=pct(summary.get('hit_rate_blocks'))))
    return lines


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


def change_pct(observed: float | None, replay: float | None) -> float | None:
    """The replay's change from the observed figure, % of |observed| (None when either is
    unknown or observed is 0)."""
    if observed is None or replay is None or observed == 0:
        return None
    return 100.0 * (replay - observed) / abs(observed)


def comparison_rows(observed: dict, replay: dict) -> list[dict]:
    """One row per metric: {metric, label, unit, observed, replay, diff_pct} (None when unknown)."""
    rows = []
    for key, _name, label, unit in METRICS:
        o, r = observed.get(key), replay.get(key)
        rows.append({"metric": key, "label": label, "unit": unit, "observed": o, "replay": r,
                     "diff_pct": change_pct(o, r)})
    return rows


def default_capacities(trace: Sequence[TraceRequest], block_size: int, points: int = 6,
                       include: int | None = None) -> list[int]:
    """Capacities (blocks) for a sweep: geometric from the largest request's need (prompt +
    output: below it some requests are rejected and the hit rate would rate another population
    of requests) up to the
    blocks of all prompts together (beyond which nothing more can be cached); `include` (e.g.
    the capacity being looked at) is added."""
    if not trace:
        return []
    needs = sorted(-(-(t.prompt_tokens + t.output_tokens) // block_size) for t in trace)
    total = sum(-(-t.prompt_tokens // block_size) for t in trace)
    lo = max(1, needs[-1])
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
            raise Cancelled(_("sweep cancelled"))
        if progress is not None:
            progress(i, n)
        res = simulate(trace, replace(config, num_gpu_blocks=cap), cancelled=cancelled,
                       record_events=False)
        out.append({"num_gpu_blocks": cap, **res.summary})
    if progress is not None:
        progress(n, n)
    return out


def _no_minus_zero(x: float) -> float:
    """An error that prints as "+0.0%", never "-0.0%" (below half the last digit shown)."""
    return 0.0 if abs(x) < 5e-4 else x


def calibration_lines(cal: dict | None, note: str | None = None) -> list[str]:
    """The calibration of a replay as text lines (CLI, panel, report): per metric the observed
    and replayed means, the error (replayed / observed - 1) after and before calibration and
    the 90th percentile's error; then where the step time came from. `cal` is
    CalibrationResult.to_dict() or None (then `note` says why there is none)."""
    if not cal:
        return [_("calibration: {x}").format(x=note or 'none')]
    out = []
    for m, name, unit in (("ttft_ms", _("TTFT"), "ms"), ("tpot_ms", _("TPOT"), "ms/token")):
        a = cal.get(m)
        if not a:
            continue
        b = (cal.get("before") or {}).get(m) or {}
        p90 = a.get("p90_error")
        out.append(_("calibration {name}: observed mean {observed:,.1f} {unit}, replayed "
                   "{replayed:,.1f} (error {error:+.1%}").format(name=name, observed=a['observed'], unit=unit, replayed=a['replayed'], error=_no_minus_zero(a['error']))
                   + (_("; before calibration {error:+.1%}").format(error=_no_minus_zero(b['error'])) if b and b is not a else "")
                   + (_("; P90 error {p90:+.1%}").format(p90=_no_minus_zero(p90)) if p90 is not None else "") + ")"
                   + (_("; the mean is reproduced, the spread is not")
                      if p90 is not None and abs(p90) > 0.25 and abs(a["error"]) <= 0.25 else ""))
    out.append(_("step time: {step_time}").format(step_time=cal.get('step_time')))
    return out
