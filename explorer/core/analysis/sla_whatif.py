"""The what-if on the violation periods (report JSON `sla.diagnosis.whatif`).

"Attainment in the violation periods if the KV-cache hit rate had been the met windows'
median": DoWhy (CausalModel, backdoor criterion, linear regression: the per-window effect of the
hit rate on the window's per-request attainment) on one row per judged window, the workload
(request rate, mean prompt length) as common causes where the windows record them. The
prediction for each failing window is its observed attainment + effect x (met median - its hit
rate), clipped to [0, 1]; the answer is their request-weighted mean, and its interval the same
with the ends of the effect's 95 % interval (DoWhy's, from the regression). Refuted with the
what-if's refuters (whatif.refute.run_refuter: placebo treatment, random common cause, data
subset). The met median lies within the windows' observed hit rates by construction, so the line is read
within the data; it is linear, which a cache collapse (a threshold effect) need not be.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..names import label
from .results import num
from explorer.core.i18n import _

TREATMENT = "kv_cache_hit_rate"
OUTCOME = "attainment"
CAUSES = ("request_rate", "prompt_tokens")
MIN_WINDOWS = 3
SIMULATIONS = 20


def period_whatif(frame: pd.DataFrame, treatment: str = TREATMENT, seed: int = 0) -> dict:
    """The what-if (module doc) on the window features `frame` (sla_features.window_features
    with met / attainment / n_judged). Returns {status: "no_data", reason} when it cannot run."""
    from dowhy import CausalModel

    from .whatif.refute import REFUTERS, run_refuter

    d = frame[frame["met"].isin([True, False]) & frame[OUTCOME].notna() & frame[treatment].notna()]
    viol, ok = d[d["met"] == False], d[d["met"] == True]  # noqa: E712 - object column
    if len(viol) < MIN_WINDOWS or len(ok) < MIN_WINDOWS:
        return {"status": "no_data", "reason": _(
            "at least {min} windows in violation periods and {min} met windows with a "
            "{treatment} are needed (have {bad} and {ok})").format(
            min=MIN_WINDOWS, treatment=label(treatment, False), bad=len(viol), ok=len(ok))}
    if np.ptp(d[treatment].to_numpy(dtype=float)) == 0:
        return {"status": "no_data", "reason": _("the {treatment} does not vary between windows").format(
            treatment=label(treatment, False))}
    causes = [c for c in CAUSES if c in d and d[c].notna().all() and np.ptp(d[c]) > 0]
    data = d[[treatment, OUTCOME, *causes]].astype(float).reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CausalModel(data=data, treatment=treatment, outcome=OUTCOME,
                            common_causes=causes or None)
        estimand = model.identify_effect(proceed_when_unidentifiable=True)
        est = model.estimate_effect(estimand, method_name="backdoor.linear_regression",
                                    confidence_intervals=True, test_significance=True)
    effect = float(est.value)
    ci = np.asarray(est.get_confidence_intervals(), dtype=float).ravel()
    lo_e, hi_e = float(ci[0]), float(ci[-1])
    target = float(ok[treatment].median())
    w = viol["n_judged"].to_numpy(dtype=float)
    x = viol[treatment].to_numpy(dtype=float)
    y = viol[OUTCOME].to_numpy(dtype=float)

    def predict(e):
        return float(np.average(np.clip(y + e * (target - x), 0, 1), weights=w))
    preds = sorted((predict(lo_e), predict(hi_e)))
    half = (hi_e - lo_e) / 2
    refs = [run_refuter(model, estimand, est, name, treatment, effect, half, SIMULATIONS, seed,
                        ci=(lo_e, hi_e)).to_dict() for name in REFUTERS]
    return {"treatment": treatment, "outcome": OUTCOME, "common_causes": causes,
            "estimate": effect, "ci_low": lo_e, "ci_high": hi_e, "windows": len(d),
            "set": {treatment: target}, "observed": float(np.average(y, weights=w)),
            "predicted": predict(effect), "predicted_low": preds[0], "predicted_high": preds[1],
            "refutations": refs,
            "observed_hit": num(np.average(x, weights=w))}
