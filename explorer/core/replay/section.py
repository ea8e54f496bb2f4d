"""The report's `replay` section (DESIGN.md: {setting, observed_badcases, predicted_badcases,
ci_low, ci_high, calibration}) plus a small capacity sweep of the replayed run, so the report
shows both what the scenario does to the badcases and that the hit rate it rests on grows with
the cache. Without a bound badcase every replayable run (up to MAX_SWEEP_RUNS) is swept, e.g.
both Mooncake traces. Qt-free; the Replay panel paints the same dict (ReplayPanel.show_report)."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from ..errors import Cancelled, NoData, TraceExplorerError
from .badcases import gather_inputs, predict
from .compare import default_capacities, replayable_runs
from .io import requests_from_store
from .replicas import simulate_replicas

#: the report's default scenario: this many times the observed KV blocks
DEFAULT_FACTOR = 4
SWEEP_POINTS = 5
#: runs swept when no badcase is bound (each sweep is SWEEP_POINTS replays of the whole run)
MAX_SWEEP_RUNS = 4
#: the sweep replays at most this many requests (the first by arrival): each point is a whole
#: replay, ~40 s of CPU per million requests, which a report at 1M requests cannot wait for;
#: every real trace we read (Mooncake 12,031, Azure 19,366 requests) is swept whole
SWEEP_MAX_REQUESTS = 20_000


#: wall seconds the report's replay section may take (prediction and sweeps together): a
#: 30,000-request trace took ~285 s, most of a 5-minute report; past the budget the section
#: stops where it is and says so (trace-explorer replay runs the replay without a budget)
REPLAY_BUDGET_S = 60.0


class _Budget:
    """A cancelled() check that also turns True once the time budget is spent (then .spent)."""

    def __init__(self, cancelled: Callable[[], bool] | None, seconds: float):
        self.cancelled = cancelled
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.spent = False

    def __call__(self) -> bool:
        if self.cancelled is not None and self.cancelled():
            return True
        if time.monotonic() > self.deadline:
            self.spent = True
        return self.spent

    def reason(self, what: str) -> str:
        from ..i18n import _
        return _("{what} did not finish within the report's {s:g} s budget for the replay "
                 "(`trace-explorer replay` runs it without one)").format(what=what, s=self.seconds)


def default_scenario(observed) -> dict:
    """A larger cache: DEFAULT_FACTOR x the observed blocks (LRU stays LRU, FIFO stays FIFO)."""
    if observed.num_gpu_blocks is None:
        return {"eviction": "lru"}
    return {"num_gpu_blocks": int(observed.num_gpu_blocks) * DEFAULT_FACTOR}


def capacity_sweep(trace, config, params: dict, replicas: int = 1, include=(),
                   cancelled: Callable[[], bool] | None = None,
                   budget: _Budget | None = None) -> dict:
    """The replay's first-query hit rate and preemptions at SWEEP_POINTS capacities (from the
    largest request's need to all prompts' blocks) plus `include`, with the calibrated step
    time: {eviction, rows: [{num_gpu_blocks, hit_rate, preemptions, rejected}], monotone}
    (monotone None when the trace has no hash ids: no hit rate), requests (replayed: the
    first SWEEP_MAX_REQUESTS), requests_total. budget: the points that did not fit in it are
    left out, `stopped` saying so."""
    total = len(trace)
    trace = trace[:SWEEP_MAX_REQUESTS]
    caps = default_capacities(trace, config.block_size, points=SWEEP_POINTS)
    caps = sorted(set(caps) | {int(c) for c in include if c})
    rows = []
    stopped = None
    for c in caps:
        try:
            if budget is not None and budget():  # checked between the points too
                raise Cancelled()
            s = simulate_replicas(trace, replace(config, num_gpu_blocks=c, **params), replicas,
                                  cancelled=budget or cancelled).summary
        except Cancelled:
            if budget is None or not budget.spent:
                raise
            from ..i18n import _
            stopped = budget.reason(_("the sweep's last {n:,} of {m:,} capacities").format(
                n=len(caps) - len(rows), m=len(caps)))
            break
        rows.append({"num_gpu_blocks": c, "hit_rate": s.get("hit_rate"),
                     "preemptions": s["preemptions"], "rejected": s["rejected"],
                     "prefix_information": s.get("prefix_information")})
    hits = [r["hit_rate"] for r in rows if r["hit_rate"] is not None and not r["rejected"]]
    # without hash ids there is no hit rate to be monotone or not: None, not False
    info = any(r["prefix_information"] for r in rows)
    out = {"eviction": config.eviction, "block_size": config.block_size, "rows": rows,
           "requests": len(trace), "requests_total": total,
           "monotone": (bool(hits) and all(b >= a for a, b in zip(hits, hits[1:])))
           if info else None}
    if stopped:
        out["stopped"] = stopped
        if not rows:
            out.update(status="no_data", reason=stopped)
    return out


def replay_section(store, cohort, scenario: dict | None = None,
                   cancelled: Callable[[], bool] | None = None) -> dict:
    """The report's `replay` dict. Without a bound badcase or recorded engine settings the
    prediction fields are None with `reason`, `sweeps` covers the first MAX_SWEEP_RUNS
    replayable runs (`sweep` is the first of them, `sweeps_left_out` counts the rest); with a
    prediction `sweeps` is [sweep], the cohort's window."""
    budget = _Budget(cancelled, REPLAY_BUDGET_S)
    try:
        inp = gather_inputs(store, cohort)
    except NoData as e:
        out = {"setting": None, "observed_badcases": None, "predicted_badcases": None,
               "ci_low": None, "ci_high": None, "calibration": None, "reason": str(e)}
        runs = replayable_runs(store)
        sweeps = [_run_sweep(store, str(r), int(n), budget)
                  for r, n in zip(runs["run_id"][:MAX_SWEEP_RUNS], runs["n"][:MAX_SWEEP_RUNS])]
        if sweeps:
            out["sweep"], out["sweeps"] = sweeps[0], sweeps
        if len(runs) > MAX_SWEEP_RUNS:
            out["sweeps_left_out"] = int(len(runs) - MAX_SWEEP_RUNS)
        return out
    scn = dict(scenario) if scenario else default_scenario(inp.observed)
    try:
        p = predict(inp, scn, cancelled=budget)
    except Cancelled:
        if not budget.spent:
            raise
        from ..i18n import _
        return {"setting": None, "observed_badcases": None, "predicted_badcases": None,
                "ci_low": None, "ci_high": None, "calibration": None,
                "reason": budget.reason(_("the replay of run {run} ({n:,} requests)").format(
                    run=inp.run_id, n=len(inp.trace)))}
    out = p.to_dict()
    out["sentence"] = p.sentence()
    # which error applies (issue 34): the calibration is in-sample; the scenario is validated
    # only where the store holds a ladder of the run's configuration to predict out of sample
    from .validate import error_status, in_sample
    out["error_applies"] = {"calibration": in_sample(),
                            "scenario": error_status(store, inp.run_id, inp.observed,
                                                     cancelled=budget)}
    cal = p.calibration or {}
    params = cal.get("params") or {}
    scn_cfg = replace(inp.observed, **scn)
    try:
        out["sweep"] = {"run_id": inp.run_id,
                        **capacity_sweep(inp.trace, scn_cfg, params, cal.get("replicas") or 1,
                                         include=(inp.observed.num_gpu_blocks,
                                                  scn_cfg.num_gpu_blocks),
                                         budget=budget)}
    except Cancelled:
        raise
    except (TraceExplorerError, ValueError) as e:
        out["sweep"] = {"status": "no_data", "reason": str(e)}
    if out["sweep"].get("rows"):
        out["sweeps"] = [out["sweep"]]
    return out


def _run_sweep(store, run_id: str, n: int, budget: _Budget) -> dict:
    """capacity_sweep of a run (its first SWEEP_MAX_REQUESTS of n requests) at its recorded
    settings (EngineConfig's defaults, LRU, where it records none), or {run_id, status,
    reason} when it cannot be replayed."""
    from .badcases import observed_settings
    from .model import EngineConfig
    from ..i18n import _
    if budget():  # the budget went on the runs before: this one is not swept
        if not budget.spent:
            raise Cancelled()
        return {"run_id": run_id, "status": "no_data",
                "reason": budget.reason(_("the sweep of this run"))}
    try:
        trace = requests_from_store(store, run_id, limit=SWEEP_MAX_REQUESTS)
        cfg = EngineConfig(**observed_settings(store, run_id))
        return {"run_id": run_id, **capacity_sweep(trace, cfg, {}, budget=budget),
                "requests_total": n}
    except Cancelled:
        raise
    except (TraceExplorerError, ValueError) as e:
        return {"run_id": run_id, "status": "no_data", "reason": str(e)}


__all__ = ["replay_section", "capacity_sweep", "default_scenario"]
