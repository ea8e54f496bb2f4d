"""Out-of-sample checks of the replay (issue 34): fit the step time (and replicas) on one run,
replay another run's arrivals with those constants, and compare with that run's observations.

predict(source_store, source_run, target_store, target_run, config) -> {metric: stats} where
stats are calibrate._stats's (observed, replayed, error = replayed / observed - 1, p90_*), over
ttft_ms, tpot_ms and e2e_ms, plus `throughput` (completion tokens / (last finish - first
arrival), tokens per second). Labelled "out-of-sample": nothing of the target was fitted.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .calibrate import _stats, calibrate_run
from .io import requests_from_store
from .model import EngineConfig
from .replicas import simulate_replicas

METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")


def _throughput(df: pd.DataFrame) -> float | None:
    a = pd.to_numeric(df["arrival_s"], errors="coerce")
    end = a + pd.to_numeric(df["e2e_ms"], errors="coerce") / 1000.0
    span = float(end.max() - a.min()) if a.notna().any() else 0.0
    tok = pd.to_numeric(df["completion_tokens"], errors="coerce").sum()
    return float(tok / span) if span > 0 else None


def predict(source_store, source_run: str, target_store, target_run: str,
            config: EngineConfig, max_evaluations: int = 40) -> dict:
    """Calibrate on the source run, replay the target's arrivals, errors against the target."""
    cal = calibrate_run(source_store, source_run, config, max_evaluations=max_evaluations)
    trace = requests_from_store(target_store, target_run)
    res = simulate_replicas(trace, replace(config, **cal.params), cal.replicas).requests
    obs = target_store.df("SELECT request_id, arrival_s, completion_tokens, ttft_ms, tpot_ms, "
                          "e2e_ms FROM requests WHERE run_id = ?", [target_run])
    obs["request_id"] = obs["request_id"].astype(str)
    j = obs.set_index("request_id")
    r = res.set_index("request_id").reindex(j.index)
    out: dict = {"label": "out-of-sample", "replicas": cal.replicas, "params": dict(cal.params),
                 "reasons": list(cal.reasons)}
    for m in METRICS:
        s = _stats(pd.to_numeric(r[m], errors="coerce"), pd.to_numeric(j[m], errors="coerce"))
        if s:
            out[m] = s
    rr = r.reset_index()
    rr["arrival_s"] = pd.to_numeric(rr["arrival_s"], errors="coerce") + 0.0
    t_obs, t_rep = _throughput(obs), _throughput(rr.assign(arrival_s=rr["arrival_s"]))
    if t_obs and t_rep:
        out["throughput"] = {"observed": t_obs, "replayed": t_rep, "error": t_rep / t_obs - 1.0}
    return out


def median_abs_error(results: list[dict], metric: str) -> float | None:
    """Median |error| of a metric's mean over held-out results (None when none has it)."""
    e = [abs(r[metric]["error"]) for r in results if metric in r]
    return float(np.median(e)) if e else None
