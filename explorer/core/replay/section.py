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
#: seconds between two progress calls of the replay section
PROGRESS_PERIOD_S = 0.25


class _Budget:
    """A cancelled() check that also turns True once the time budget is spent (then .spent),
    and the section's progress: polled by every replay (each ~1,000 engine loops), it calls
    progress(elapsed s, budget s, text) at most every PROGRESS_PERIOD_S, elapsed never falling
    (the bar of a bounded section is its time against its bound)."""

    def __init__(self, cancelled: Callable[[], bool] | None, seconds: float,
                 progress: Callable[[int, int, str], None] | None = None):
        self.cancelled = cancelled
        self.seconds = seconds
        self.start = time.monotonic()
        self.deadline = self.start + seconds
        self.spent = False
        self.progress = progress
        self.stage = ""
        self._said = -1.0  # the elapsed seconds last told (progress is monotone)
        self.notes: list[str] = []  # every "stopped after ..." said, in order
        self._told_at = -1e9

    def elapsed(self) -> float:
        return max(0.0, time.monotonic() - self.start)

    def at(self, stage: str) -> None:
        """The part of the section now running (shown with the progress, named if it stops)."""
        self.stage = stage
        self._tell(force=True)

    def _tell(self, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if not force and now - self._told_at < PROGRESS_PERIOD_S:
            return
        self._told_at = now
        total = max(1, int(round(self.seconds)))
        done = min(total, max(int(self._said), int(self.elapsed())))
        self._said = done
        from ..i18n import _
        self.progress(done, total, _("{stage}: {s:.0f} of at most {b:g} s").format(
            stage=self.stage, s=done, b=self.seconds))

    def __call__(self) -> bool:
        if self.cancelled is not None and self.cancelled():
            return True
        if time.monotonic() > self.deadline:
            self.spent = True
        self._tell()
        return self.spent

    def reason(self, what: str) -> str:
        from ..i18n import _
        note = _("stopped after {e:.0f} s (the report's {s:g} s budget for the replay, "
                 "while {stage}): {what} did not finish (`trace-explorer replay` runs it "
                 "without a budget)").format(e=self.elapsed(), s=self.seconds, what=what,
                                              stage=self.stage or _("starting"))
        self.notes.append(note)
        return note

    def to_dict(self, stopped: str | None = None) -> dict:
        """The section's stated bound: {seconds, elapsed_s, stopped (the note, or None)}."""
        return {"seconds": self.seconds, "elapsed_s": round(self.elapsed(), 1),
                "stopped": stopped if stopped is not None else
                (self.notes[0] if self.notes else None)}


def default_scenario(observed) -> dict:
    """A larger cache: DEFAULT_FACTOR x the observed blocks (LRU stays LRU, FIFO stays FIFO)."""
    if observed.num_gpu_blocks is None:
        return {"eviction": "lru"}
    return {"num_gpu_blocks": int(observed.num_gpu_blocks) * DEFAULT_FACTOR}


def capacity_sweep(trace, config, params: dict, replicas: int = 1, include=(),
                   cancelled: Callable[[], bool] | None = None,
                   budget: _Budget | None = None, label: str = "",
                   routing: str = "round-robin") -> dict:
    """The replay's first-query hit rate and preemptions at SWEEP_POINTS capacities (from the
    largest request's need to all prompts' blocks) plus `include`, with the calibrated step
    time: {eviction, rows: [{num_gpu_blocks, hit_rate, preemptions, rejected}], monotone}
    (monotone None when the trace has no hash ids: no hit rate), requests (replayed: the
    first SWEEP_MAX_REQUESTS), requests_total. budget: the points that did not fit in it are
    left out, `stopped` saying so (label: the run, in the progress shown); replicas and
    routing: how arrivals reach the engines (the calibration's or the deployment's)."""
    total = len(trace)
    trace = trace[:SWEEP_MAX_REQUESTS]
    caps = default_capacities(trace, config.block_size, points=SWEEP_POINTS)
    caps = sorted(set(caps) | {int(c) for c in include if c})
    rows = []
    stopped = None
    for i, c in enumerate(caps):
        try:
            if budget is not None:
                from ..i18n import _
                budget.at(_("sweeping {run}: capacity {i} of {m} ({c:,} KV blocks, {n:,} "
                            "requests)").format(run=label or _("the run"), i=i + 1,
                                                m=len(caps), c=c, n=len(trace)))
            if budget is not None and budget():  # checked between the points too
                raise Cancelled()
            s = simulate_replicas(trace, replace(config, num_gpu_blocks=c, **params), replicas,
                                  cancelled=budget or cancelled, routing=routing).summary
        except Cancelled:
            if budget is None or not budget.spent:
                raise
            from ..i18n import _
            stopped = budget.reason(_("{k:,} of {m:,} capacities swept, the other {n:,}").format(
                n=len(caps) - len(rows), m=len(caps), k=len(rows)))
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
                   cancelled: Callable[[], bool] | None = None,
                   progress: Callable[[int, int, str], None] | None = None) -> dict:
    """The report's `replay` dict. Without a bound badcase or recorded engine settings the
    prediction fields are None with `reason`, `sweeps` covers the first MAX_SWEEP_RUNS
    replayable runs (`sweep` is the first of them, `sweeps_left_out` counts the rest); with a
    prediction `sweeps` is [sweep], the cohort's window. `budget` states the bound (REPLAY_BUDGET_S
    wall seconds), the time used and the first "stopped after ..." note when it ran out.
    progress(elapsed s, budget s, text): now and then, elapsed never falling."""
    budget = _Budget(cancelled, REPLAY_BUDGET_S, progress)
    out = _section(store, cohort, scenario, budget)
    out["budget"] = budget.to_dict()
    return out


def _section(store, cohort, scenario: dict | None, budget: _Budget) -> dict:
    from ..i18n import _
    budget.at(_("reading the runs to replay"))
    try:
        inp = gather_inputs(store, cohort)
    except NoData as e:
        return _no_prediction(store, str(e), budget)
    scn = dict(scenario) if scenario else default_scenario(inp.observed)
    what = _("run {run} ({n:,} requests)").format(run=inp.run_id, n=len(inp.trace))
    # predict's progress(i, 5): i = 0 start, 1 calibration, 2 and 3 the two replays, 4 the model
    stages = (_("preparing the replay of {what}"), _("calibrating the step time on {what}"),
              _("replaying {what} at the observed settings"),
              _("replaying {what} under the scenario"), _("predicting the badcases of {what}"))
    try:
        p = predict(inp, scn, cancelled=budget,
                    progress=lambda i, n: budget.at(stages[min(i, len(stages) - 1)].format(
                        what=what)))
    except NoData as e:   # e.g. a known deployment's run whose cases record no hit rate
        return _no_prediction(store, str(e), budget)
    except Cancelled:
        if not budget.spent:
            raise
        return {"setting": None, "observed_badcases": None, "predicted_badcases": None,
                "ci_low": None, "ci_high": None, "calibration": None,
                "reason": budget.reason(_("the replay of run {run} ({n:,} requests)").format(
                    run=inp.run_id, n=len(inp.trace)))}
    out = p.to_dict()
    out["sentence"] = p.sentence()
    # which error applies (issue 34): the calibration is in-sample; the scenario is validated
    # only where the store holds a ladder of the run's configuration to predict out of sample
    from .validate import error_status, in_sample
    budget.at(_("checking the scenario's error on the runs of a ladder"))
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
                                         budget=budget, label=str(inp.run_id),
                                         routing=cal.get("routing") or "round-robin")}
    except Cancelled:
        raise
    except (TraceExplorerError, ValueError) as e:
        out["sweep"] = {"status": "no_data", "reason": str(e)}
    if out["sweep"].get("rows"):
        out["sweeps"] = [out["sweep"]]
    return out


def _no_prediction(store, reason: str, budget: _Budget) -> dict:
    """The section without a prediction (reason: why): the sweeps of the first MAX_SWEEP_RUNS
    replayable runs."""
    out = {"setting": None, "observed_badcases": None, "predicted_badcases": None,
           "ci_low": None, "ci_high": None, "calibration": None, "reason": reason}
    runs = replayable_runs(store)
    sweeps = [_run_sweep(store, str(r), int(n), budget)
              for r, n in zip(runs["run_id"][:MAX_SWEEP_RUNS], runs["n"][:MAX_SWEEP_RUNS])]
    if sweeps:
        out["sweep"], out["sweeps"] = sweeps[0], sweeps
    if len(runs) > MAX_SWEEP_RUNS:
        out["sweeps_left_out"] = int(len(runs) - MAX_SWEEP_RUNS)
    return out


def _run_sweep(store, run_id: str, n: int, budget: _Budget) -> dict:
    """capacity_sweep of a run (its first SWEEP_MAX_REQUESTS of n requests) at its recorded
    settings (EngineConfig's defaults, LRU, where it records none) with its known deployment's
    engine, replicas and routing (badcases.engine_of, as `replay`), or {run_id, status,
    reason} when it cannot be replayed."""
    from .badcases import engine_of, observed_settings
    from ..i18n import _
    budget.at(_("reading run {run} ({n:,} requests) to sweep it").format(run=run_id, n=n))
    if budget():  # the budget went on the runs before: this one is not swept
        if not budget.spent:
            raise Cancelled()
        return {"run_id": run_id, "status": "no_data",
                "reason": budget.reason(_("the sweep of this run"))}
    try:
        trace = requests_from_store(store, run_id, limit=SWEEP_MAX_REQUESTS)
        cfg, dep = engine_of(store, run_id, observed_settings(store, run_id))
        return {"run_id": run_id, **capacity_sweep(trace, cfg, {}, dep.get("replicas") or 1,
                                                   budget=budget, label=run_id,
                                                   routing=dep.get("routing") or "round-robin"),
                "requests_total": n}
    except Cancelled:
        raise
    except (TraceExplorerError, ValueError) as e:
        return {"run_id": run_id, "status": "no_data", "reason": str(e)}


__all__ = ["replay_section", "capacity_sweep", "default_scenario"]
