"""From the engine to the answers: would these badcases have been answered correctly with a
bigger KV cache, another eviction policy or another max-num-seqs?

predict_badcases(store, cohort, scenario):
1. The run most of the cohort's bound badcases ran on, and its requests in the cohort's time
   window (the first to the last bound case's arrival, plus WARMUP_S before it so the cache is
   as warm as it was).
2. The observed settings: the engine settings the run records (runs.config: num_gpu_blocks,
   eviction, block_size, max_num_seqs, max_num_batched_tokens; the demo and replays record
   them), else `observed` given by the caller, completed by the run's published deployment
   (engine_of: deployments.with_kv_read's scheduler, KV read and pod KV capacity, and its
   replica count and routing, as `replay`, the Replay panel and the validation take them);
   NoData when none says the KV-cache size.
3. Calibration on that window (calibrate.calibrate): the step time is fitted so the replay at
   the observed settings reproduces the window's observed TTFT / TPOT; its errors travel with
   the answer.
4. Two replays of the window with that step time: at the observed settings (base) and under
   the scenario. Each case's KV-cache hit rate and preemptions move by the replay's difference,
   h' = clip(h_obs + h_scenario - h_base, 0, 1), n' = max(0, n_obs + n_scenario - n_base): the
   engine model's own error at the observed settings cancels.
5. The what-if's outcome model (whatif.joint_counterfactual, fitted on every bound case of the
   cohort) turns (h', n') into each case's chance of being a badcase; predicted_badcases is the
   expected count over the replayed cases, with an interval (model draws x chance).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import NoData
from .calibrate import calibrate
from .replicas import simulate_replicas
from .io import requests_from_store
from .model import EngineConfig
from explorer.core.i18n import _, ngettext

WARMUP_S = 600.0
SETTINGS = ("num_gpu_blocks", "block_size", "eviction", "max_num_seqs", "max_num_batched_tokens")
TREATMENTS = ("kv_cache_hit_rate", "num_preemptions")


@dataclass(frozen=True)
class BadcasePrediction:
    """to_dict() is the report's `replay` section: {setting, observed_badcases,
    predicted_badcases, ci_low, ci_high, calibration, ...}."""
    setting: dict
    observed_badcases: int
    predicted_badcases: float
    ci_low: float
    ci_high: float
    calibration: dict | None
    run_id: str
    window: dict
    n_cases: int
    replay: dict
    per_case: pd.DataFrame
    model: str
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {"setting": self.setting, "observed_badcases": self.observed_badcases,
                "predicted_badcases": self.predicted_badcases, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "calibration": self.calibration,
                "run_id": self.run_id, "window": self.window, "cases": self.n_cases,
                "replay": self.replay, "model": self.model, "warnings": list(self.warnings)}

    def sentence(self) -> str:
        """One line for the panel and the report."""
        s = self.setting
        return ngettext(
            "Replaying {requests:,} requests of {run_id} under {setting}: {observed:,} "
            "badcase observed among {cases:,} replayed cases, {predicted:.1f} predicted "
            "(95% interval {low:.0f} to {high:.0f}).",
            "Replaying {requests:,} requests of {run_id} under {setting}: {observed:,} "
            "badcases observed among {cases:,} replayed cases, {predicted:.1f} predicted "
            "(95% interval {low:.0f} to {high:.0f}).", int(self.observed_badcases)).format(
                     requests=self.window["requests"], run_id=self.run_id, setting=s["label"],
                     observed=self.observed_badcases, cases=self.n_cases,
                     predicted=self.predicted_badcases, low=self.ci_low, high=self.ci_high)


def observed_settings(store, run_id: str) -> dict:
    """The engine settings the run records (runs.config), {} when none."""
    df = store.df("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if df.empty or not df["config"].iloc[0]:
        return {}
    try:
        cfg = json.loads(df["config"].iloc[0])
    except (TypeError, ValueError):
        return {}
    return {k: cfg[k] for k in SETTINGS if isinstance(cfg, dict) and k in cfg}


def engine_of(store, run_id: str, settings: dict) -> tuple[EngineConfig, dict]:
    """(EngineConfig, deployment) a replay of the run runs: `settings` (EngineConfig fields)
    with the run's known deployment's engine facts (deployments.with_kv_read: scheduler, KV
    read per decode step, and the pod's KV capacity when settings give no num_gpu_blocks; an
    explicit None, an infinite cache, stays), the one model the CLI `replay`, the Replay panel
    and the validation replay; deployment: deployments.deployment_of ({} when not known: the
    settings unchanged)."""
    from .deployments import deployment_of, with_kv_read
    dep = deployment_of(store, run_id) or {}
    cfg = EngineConfig(**{k: v for k, v in settings.items() if k in SETTINGS})
    return with_kv_read(dep, cfg, capacity="num_gpu_blocks" not in settings), dep


def _label(cfg: EngineConfig, base: EngineConfig) -> str:
    parts = []
    if cfg.num_gpu_blocks != base.num_gpu_blocks:
        blocks = _("infinite") if cfg.num_gpu_blocks is None else f"{cfg.num_gpu_blocks:,}"
        parts.append(_("{blocks} KV blocks (observed {observed})").format(
            blocks=blocks, observed=f"{base.num_gpu_blocks:,}") if base.num_gpu_blocks
            else _("{blocks} KV blocks").format(blocks=cfg.num_gpu_blocks))
    if cfg.eviction != base.eviction:
        parts.append(_("{eviction} eviction (observed {observed})").format(
            eviction=cfg.eviction.upper(), observed=base.eviction.upper()))
    if cfg.max_num_seqs != base.max_num_seqs:
        parts.append(_("max-num-seqs {n} (observed {observed})").format(
            n=cfg.max_num_seqs, observed=base.max_num_seqs))
    return ", ".join(parts) or _("the observed settings")


@dataclass(frozen=True)
class BadcaseInputs:
    """What predict() needs from the store (gather_inputs reads it on the store's thread)."""
    frame: pd.DataFrame
    run_id: str
    observed: EngineConfig
    trace: list
    latencies: pd.DataFrame
    window: dict
    n_bound_elsewhere: int
    replicas: int | None = None       # the deployment's published count (None: fitted)
    routing: str = "round-robin"      # the deployment's routing (replicas.ROUTINGS)


def gather_inputs(store, cohort, observed: dict | None = None,
                  warmup_s: float = WARMUP_S) -> BadcaseInputs:
    """Steps 1-2 of the module doc: the cohort frame, the run, its window's trace and
    latencies, the observed settings. Raises NoData (no bound badcase, no settings)."""
    from ..analysis.cohort import cohort_frame

    frame = cohort_frame(store, cohort)
    bound = frame[frame["request_id"].notna() & frame["run_id"].notna()]
    bad = bound[bound["badcase"] == 1]
    if bad.empty:
        raise NoData(_("none of the cohort's badcases is bound to a request: nothing to replay."))
    run_id = str(bad["run_id"].value_counts().idxmax())
    settings = {**(observed or {}), **observed_settings(store, run_id)}
    base_cfg, dep = engine_of(store, run_id, settings)
    if "num_gpu_blocks" not in settings and base_cfg.num_gpu_blocks is None:
        raise NoData(_("Run {run_id} does not record its engine's KV-cache size (num_gpu_blocks): "
                     "give the observed settings to replay it.").format(run_id=run_id))
    base_cfg.validate()
    mine = bound[bound["run_id"] == run_id]
    t = mine["arrival_s"].dropna()
    if t.empty:
        raise NoData(_("The cohort's requests on {run_id} have no arrival times.").format(run_id=run_id))
    t0, t1 = float(t.min()), float(t.max())
    trace = [r for r in requests_from_store(store, run_id) if t0 - warmup_s <= r.arrival_s <= t1]
    rows = store.df("SELECT request_id, ttft_ms, tpot_ms FROM requests WHERE run_id = ?", [run_id])
    rows["request_id"] = rows["request_id"].astype(str)
    ids = {r.request_id for r in trace}
    return BadcaseInputs(frame=frame, run_id=run_id, observed=base_cfg, trace=trace,
                         latencies=rows[rows["request_id"].isin(ids)].reset_index(drop=True),
                         window={"start_s": t0, "end_s": t1, "warmup_s": warmup_s,
                                 "requests": len(trace)},
                         n_bound_elsewhere=int(len(bound) - len(mine)),
                         replicas=dep.get("replicas"),
                         routing=dep.get("routing") or "round-robin")


def predict_badcases(store, cohort, scenario: dict, observed: dict | None = None, *,
                     warmup_s: float = WARMUP_S, seed: int = 0,
                     progress: Callable[[int, int], None] | None = None,
                     cancelled: Callable[[], bool] | None = None) -> BadcasePrediction:
    """See the module doc: gather_inputs then predict. scenario: EngineConfig fields to change
    (e.g. {"num_gpu_blocks": 40000, "eviction": "lru"}); observed: the observed settings when
    the run does not record them. Raises NoData (no bound badcase, no settings, too few cases),
    ValueError (bad settings), WhatIfError, Cancelled."""
    return predict(gather_inputs(store, cohort, observed, warmup_s), scenario, seed=seed,
                   progress=progress, cancelled=cancelled)


def predict(inp: BadcaseInputs, scenario: dict, *, seed: int = 0,
            progress: Callable[[int, int], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> BadcasePrediction:
    """Steps 3-5 of the module doc on gathered inputs (no store access: runs on any thread)."""
    from ..analysis.whatif.joint import joint_counterfactual

    def tick(i):
        if progress is not None:
            progress(i, 5)
    tick(0)
    frame, run_id, base_cfg, trace = inp.frame, inp.run_id, inp.observed, inp.trace
    scn_cfg = replace(base_cfg, **scenario)
    scn_cfg.validate()
    mine = frame[(frame["run_id"] == run_id) & frame["request_id"].notna()]
    tick(1)
    cal = calibrate(trace, inp.latencies, base_cfg, cancelled=cancelled,
                    fixed_replicas=inp.replicas, routing=inp.routing)
    params = cal.params
    tick(2)
    base = simulate_replicas(trace, replace(base_cfg, **params), cal.replicas, cancelled=cancelled,
                             routing=cal.routing)
    tick(3)
    scn = simulate_replicas(trace, replace(scn_cfg, **params), cal.replicas, cancelled=cancelled,
                            routing=cal.routing)
    tick(4)
    b = base.requests.set_index("request_id")
    s = scn.requests.set_index("request_id")
    target = frame.index.isin(mine.index) & frame["request_id"].astype(str).isin(b.index)
    target = pd.Series(target, index=frame.index)
    r_t = frame.loc[target, "request_id"].astype(str)
    new = {}
    for col, lo, hi in (("kv_cache_hit_rate", 0.0, 1.0), ("num_preemptions", 0.0, None)):
        obs = frame.loc[target, col].to_numpy(float)
        d = s.loc[r_t, col].to_numpy(float) - b.loc[r_t, col].to_numpy(float)
        new[col] = np.clip(obs + d, lo, hi)
    jc = joint_counterfactual(frame, new, target, "badcase", seed=seed)
    tick(5)
    pc = jc.per_case.join(pd.DataFrame({"case_id": frame.loc[target, "case_id"],
                                        "request_id": r_t,
                                        "h_obs": frame.loc[target, "kv_cache_hit_rate"],
                                        "n_obs": frame.loc[target, "num_preemptions"],
                                        "h_new": new["kv_cache_hit_rate"],
                                        "n_new": new["num_preemptions"]}, index=r_t.index))
    warn = list(jc.warnings)
    if cal.warning:
        warn.insert(0, cal.warning)
    left = inp.n_bound_elsewhere
    if left:
        warn.append(ngettext("{n:,} bound case ran on another run and is not replayed here.",
                             "{n:,} bound cases ran on other runs and are not replayed here.",
                             left).format(n=left))
    summ = {k: (base.summary.get(k), scn.summary.get(k))
            for k in ("hit_rate", "preemptions", "ttft_ms_mean", "tpot_ms_mean")}
    return BadcasePrediction(
        setting={"observed": {k: getattr(base_cfg, k) for k in SETTINGS},
                 "scenario": {k: getattr(scn_cfg, k) for k in SETTINGS},
                 "label": _label(scn_cfg, base_cfg)},
        observed_badcases=int(round(jc.observed)), predicted_badcases=jc.predicted,
        ci_low=jc.ci_low, ci_high=jc.ci_high, calibration=cal.to_dict(), run_id=run_id,
        window=dict(inp.window),
        n_cases=jc.n_target,
        replay={k: {"observed_settings": v[0], "scenario": v[1]} for k, v in summ.items()},
        per_case=pc, model=jc.model, warnings=tuple(warn))
