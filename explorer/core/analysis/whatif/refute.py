"""Refuting a what-if estimate with DoWhy's refuters, and the plain verdict on each.

Three refuters (DoWhy's refute_estimate), each num_simulations simulations, seeded:
placebo_treatment_refuter (treatment permuted: the effect must vanish), random_common_cause
(an irrelevant confounder added: the estimate must stay), data_subset_refuter (random
SUBSET_FRACTION of the rows: the estimate must stay). Effects are in the outcome's units; the
tolerance is the estimate's own interval half-width (see verdict).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .constants import SUBSET_FRACTION

#: The refuters run, in order, with the label the user reads.
REFUTERS = {"placebo_treatment_refuter": "Placebo treatment",
            "random_common_cause": "Random common cause",
            "data_subset_refuter": "Data subset"}


@dataclass(frozen=True)
class Refutation:
    """One refuter's outcome. new_effect is in the outcome's units; p_value is DoWhy's."""
    name: str            # "placebo_treatment_refuter" | "random_common_cause" | "data_subset_refuter"
    label: str           # "Placebo treatment" ...
    new_effect: float | None
    p_value: float | None
    verdict: str         # "passes" | "raises doubt"
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_refuter(model, estimand, estimate, name: str, treatment: str, est: float,
                half: float, num_simulations: int, seed: int) -> Refutation:
    """Run refuter `name` (a key of REFUTERS) on DoWhy's `estimate` of `estimand` (from
    CausalModel `model`) and judge it against the estimate `est` and its interval half-width
    `half` (outcome units). A refuter that fails is a finding, not a crash: its Refutation
    says "raises doubt" with the error."""
    kw: dict[str, Any] = {"num_simulations": num_simulations, "random_state": seed}
    if name == "placebo_treatment_refuter":
        kw["placebo_type"] = "permute"
    elif name == "data_subset_refuter":
        kw["subset_fraction"] = SUBSET_FRACTION
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = model.refute_estimate(estimand, estimate, method_name=name,
                                      show_progress_bar=False, **kw)
        new = float(np.asarray(r.new_effect, dtype=float).ravel()[0])
        rr = r.refutation_result or {}
        p = rr.get("p_value")
        p = float(np.asarray(p, dtype=float).ravel()[0]) if p is not None else None
        judged, why = verdict(name, treatment, est, half, new, p)
    except Exception as exc:   # a refuter failing is a finding, not a crash
        new, p, judged, why = None, None, "raises doubt", f"the refuter failed: {exc}"
    return Refutation(name, REFUTERS[name], new, p, judged, why)


def verdict(kind: str, treatment: str, est: float, half: float, new: float | None,
            p: float | None) -> tuple[str, str]:
    """Plain verdict for one refuter.

    placebo: passes when the placebo effect is within the estimate's own half-interval of zero
    (or below 10 % of the estimate): a shuffled treatment must have no effect.
    random_common_cause / data_subset: passes when the new estimate stays within the half-
    interval (or 10 %) of the original: an irrelevant confounder or a random 80 % of the rows
    must not move it.
    """
    if new is None or not math.isfinite(new):
        return "raises doubt", "the refuter produced no estimate"
    tol = max(half, 0.1 * abs(est))
    if kind == "placebo_treatment_refuter":
        ok = abs(new) <= tol
        why = (f"with {treatment} shuffled (a placebo with no effect by construction) the effect "
               f"is {new:+.3g}, {'near zero' if ok else 'far from zero'} against the estimate "
               f"{est:+.3g} (interval half-width {half:.3g})")
        if ok and abs(est) <= half:
            why += "; the estimate itself is not distinguishable from zero either"
    elif kind == "random_common_cause":
        ok = abs(new - est) <= tol
        why = (f"adding a random common cause moves the estimate from {est:+.3g} to {new:+.3g}"
               + (" (within its interval)" if ok else ", outside its interval"))
    else:
        ok = abs(new - est) <= tol
        why = (f"on random {SUBSET_FRACTION:.0%} subsets the estimate is {new:+.3g} on average "
               f"against {est:+.3g}" + (" (stable)" if ok else ": it depends on which rows are used"))
    if p is not None and math.isfinite(p):
        why += f"; DoWhy p = {'< 0.001' if p < 0.001 else f'{p:.3g}'}"
    return ("passes" if ok else "raises doubt"), why
