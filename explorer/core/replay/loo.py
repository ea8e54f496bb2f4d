"""Leave-one-out validation of the replay over a ladder of runs (issue 34, Deliver 1), beside
validate.validate_ladder's fit-on-low, predict-high.

Each run of the ladder is calibrated on its own observed mean TTFT and TPOT once
(calibrate.calibrate_run, the arrival model fixed as validate.fit fixes it: the deployment's
published replica count and routing, else the caller's, else fitted). Held out in turn, a run
is predicted with the step-time constants pooled from the *other* runs' calibrations (the
median of each constant, and of the replica count), so nothing of the held-out run enters its
prediction; its error is then out of sample like fit-on-low's. The interval of a held-out
prediction spans the routing seeds only (the unidentified-parameter alternatives of
validate.fit are not replayed here: leave-one-out fits at every setting, including loaded ones).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from .calibrate import calibrate_run
from .model import DEFAULT_TIMING, EngineConfig
from .validate import METRICS, SEEDS, Fit, _ladder, _median, predict
from ..i18n import _


def leave_one_out(store, config: EngineConfig, group: str | None = None, *,
                  replicas: int | None = None, routing: str | None = None,
                  seeds: int | None = None, max_evaluations: int = 24,
                  progress: Callable[[int, int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> dict:
    """Leave-one-out over the ladder `group` (validate.ladders; default the one with the most
    runs, at least 3). Returns {mode: "leave-one-out", group, setting_key, fit: {replicas,
    routing, replicas_source, pooling}, calibrations: [{setting, run_id, params, replicas,
    in_sample: {ttft_ms, tpot_ms}}], held_out: [{setting, run_id, fitted_on, params, replicas,
    ttft_ms: {observed, replayed, error, p90_*...}, ..., throughput}], median_abs_error,
    label}. Raises NoData when no ladder has 3 runs."""
    from .deployments import deployment_of, with_kv_read
    group, lad = _ladder(store, group, 3)
    runs = lad["runs"]
    dep = deployment_of(store, runs[0][1]) if replicas is None or routing is None else None
    config = with_kv_read(dep or deployment_of(store, runs[0][1]), config)
    src = "given" if replicas is not None else ("deployment" if dep else "fitted")
    k = replicas if replicas is not None else (dep or {}).get("replicas")
    rt = routing or (dep or {}).get("routing") or "round-robin"
    n_seeds = seeds if seeds is not None else (1 if rt == "round-robin" else SEEDS)
    total = 2 * len(runs)
    cals = []
    for i, (_v, rid) in enumerate(runs):
        if progress is not None:
            progress(i, total)
        cals.append(calibrate_run(store, rid, config, cancelled=cancelled,
                                  max_evaluations=max_evaluations, fixed_replicas=k, routing=rt))
    held = []
    for i, (v, rid) in enumerate(runs):
        if progress is not None:
            progress(len(runs) + i, total)
        others = [c for j, c in enumerate(cals) if j != i]
        params = {p: float(np.median([c.params[p] for c in others])) for p in DEFAULT_TIMING}
        # the KV read per decode step is a deployment fact (deployments.with_kv_read), not pooled
        params["step_per_kv_token_ms"] = float(config.step_per_kv_token_ms)
        reps = int(round(float(np.median([c.replicas for c in others]))))
        f = Fit(source_run=_("the other {n} settings").format(n=len(others)), calibration=None,
                config=replace(config, **params), replicas=reps, routing=rt, seeds=int(n_seeds))
        held.append({"setting": v, "run_id": rid, **predict(f, store, rid, cancelled=cancelled),
                     "fitted_on": [r for j, (_x, r) in enumerate(runs) if j != i],
                     "params": params, "replicas": reps})
    if progress is not None:
        progress(total, total)
    med = {m: _median(held, m) for m in (*METRICS, "throughput")}
    med.update({f"p90_{m}": _median(held, m, "p90_error") for m in METRICS})
    worst = [x for x in (med["ttft_ms"], med["tpot_ms"]) if x is not None]
    label = (_("leave-one-out at {n} settings, median error {x:.0%}").format(
        n=len(held), x=max(worst)) if worst else _("not validated"))
    return {"mode": "leave-one-out", "group": group, "setting_key": lad["key"],
            "fit": {"replicas": k, "routing": rt, "replicas_source": src, "seeds": int(n_seeds),
                    "pooling": "median of the other settings' fitted step-time constants"},
            "calibrations": [{"setting": v, "run_id": r, "params": dict(c.params),
                              "replicas": c.replicas,
                              "in_sample": {m: c.after[m]["error"] for m in c.after}}
                             for (v, r), c in zip(runs, cals)],
            "held_out": held, "median_abs_error": med, "label": label}


#: the validation modes of `replay --validate --mode` and of the Replay panel, in order:
#: fit on the lowest setting and predict the higher ones; leave each setting out in turn
MODES = ("low-high", "loo")
#: the choice offered: one mode, or both (MODES in order)
MODE_CHOICES = (*MODES, "both")


def validators(mode: str) -> list[tuple[str, Callable]]:
    """[(mode, function(store, config, group, *, replicas, routing, progress, cancelled))] that
    `mode` (MODE_CHOICES) runs, in MODES order; ValueError on another mode. The one dispatch of
    the CLI's --mode and the panel's mode choice."""
    from .validate import validate_ladder
    if mode not in MODE_CHOICES:
        raise ValueError(_("validation mode {m!r} is not one of {c}").format(
            m=mode, c=", ".join(MODE_CHOICES)))
    funcs = {"low-high": validate_ladder, "loo": leave_one_out}
    return [(m, funcs[m]) for m in MODES if mode in (m, "both")]
