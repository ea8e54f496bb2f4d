"""Refuting a what-if estimate with DoWhy's refuters, and the plain verdict on each.

Three refuters (DoWhy's refute_estimate), each num_simulations simulations, seeded:
placebo_treatment_refuter (treatment permuted: the effect must vanish), random_common_cause
(an irrelevant confounder added: the estimate must stay), data_subset_refuter (random
SUBSET_FRACTION of the rows: the estimate must stay). Effects are in the outcome's units; the
tolerance is the estimate's own interval half-width, and for the data subset also DoWhy's p
with the spread a stable estimate shows on a subset (see verdict).

Past REFUTE_ROWS rows the refuters run on a stratified random sample (stratified_sample), whose
estimate differs from the full-data one by about subset_spread(half, n / N) (one standard
deviation); scenario._refuted states both.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from .constants import CONFIDENCE, SUBSET_FRACTION
from explorer.core.names import label
from explorer.core.i18n import N_, _

#: DoWhy's significance level for its refutation p-values (test_significance's default).
ALPHA = 0.05

#: Largest placebo effect, as a share of an estimate whose interval excludes 0, that passes.
PLACEBO_SHARE = 0.5

#: The refuters run, in order, with the label the user reads.
REFUTERS = {"placebo_treatment_refuter": N_("Placebo treatment"),
            "random_common_cause": N_("Random common cause"),
            "data_subset_refuter": N_("Data subset")}


@dataclass(frozen=True)
class Refutation:
    """One refuter's outcome. new_effect is in the outcome's units; p_value is DoWhy's."""
    name: str            # "placebo_treatment_refuter" | "random_common_cause" | "data_subset_refuter"
    label: str           # "Placebo treatment" ...
    new_effect: float | None
    p_value: float | None
    verdict: str         # "passes" | "raises doubt" | "could not run" (why says why)
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_refuter(model, estimand, estimate, name: str, treatment: str, est: float,
                half: float, num_simulations: int, seed: int,
                ci: tuple[float, float] | None = None) -> Refutation:
    """Run refuter `name` (a key of REFUTERS) on DoWhy's `estimate` of `estimand` (from
    CausalModel `model`) and judge it against the estimate `est` and its interval half-width
    `half` (outcome units), `ci` its interval (low, high). A refuter that fails is a finding, not a crash: its Refutation
    says "raises doubt" with the error."""
    # A RandomState, not the int: DoWhy 0.14's data_subset_refuter hands an int seed to every
    # simulation's DataFrame.sample, so all of them drew the same subset (spread 0, p = 0);
    # the other two refuters turn an int into one RandomState themselves.
    kw: dict[str, Any] = {"num_simulations": num_simulations,
                          "random_state": np.random.RandomState(seed)}
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
        if p is not None and not math.isfinite(p):
            p = None
        if not math.isfinite(new):
            new, p = None, None
            judged, why = "could not run", (
                _("the refuter could not run: its refits gave no finite estimate (a random "
                "subset or permutation left the model undefined, e.g. without any case of one "
                "outcome), so this check says nothing"))
        else:
            judged, why = verdict(name, treatment, est, half, new, p, ci=ci)
    except Exception as exc:   # a refuter failing is a finding, not a crash
        new, p, judged, why = None, None, "raises doubt", _("the refuter failed: {exc}").format(exc=exc)
    return Refutation(name, _(REFUTERS[name]), new, p, judged, why)


def _num(x: float) -> str:
    """A signed number in 3 significant digits, an exact zero as plain "0" (not "+0")."""
    return "0" if x == 0 else f"{x:+.3g}"


def _p_text(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return ""
    return _("; DoWhy p < 0.001") if p < 0.001 else _("; DoWhy p = {x:.3g}").format(x=p)


def subset_spread(half: float, fraction: float = SUBSET_FRACTION) -> float:
    """Standard deviation of the difference between one estimate on a random `fraction` of the
    rows and the full-data estimate when the estimate is stable: SE * sqrt((1 - f) / f)
    (the subset estimate's variance SE^2 / f minus the shared part SE^2), with the standard
    error SE = half / z, half the CONFIDENCE interval's width (z = 1.96 at 95 %). Outcome
    units; 0.5 SE at f = 0.8."""
    z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
    return half / z * math.sqrt((1 - fraction) / fraction)


def stratified_sample(strata: np.ndarray, size: int, seed: int,
                      floor: int = 0) -> np.ndarray:
    """Ascending row positions of a random sample of about `size` of the len(strata) rows,
    drawn without replacement within each stratum (strata: one label per row) in proportion to
    its share: round(size * N_h / N) rows of a stratum of N_h, at least min(N_h, floor) (so a
    rare outcome keeps enough cases for its refits). Seeded (numpy default_rng(seed)); the
    positions ascend, so the sample keeps the rows' order."""
    strata = np.asarray(strata)
    if size >= len(strata):
        return np.arange(len(strata))
    rng = np.random.default_rng(seed)
    _keys, inv = np.unique(strata, return_inverse=True)
    share = size / len(strata)
    parts = []
    for k in range(len(_keys)):
        rows = np.flatnonzero(inv == k)
        m = min(len(rows), max(int(round(len(rows) * share)), floor))
        parts.append(rng.choice(rows, m, replace=False))
    return np.sort(np.concatenate(parts))


def verdict(kind: str, treatment: str, est: float, half: float, new: float | None,
            p: float | None, *, ci: tuple[float, float] | None = None) -> tuple[str, str]:
    """Plain verdict ("passes" | "raises doubt", why) for one refuter.

    est: the estimate; half: half its interval's width; ci: the interval (low, high), used to
    say whether the estimate is distinguishable from zero (default: |est| <= half); new: the
    refuter's mean new effect; p: DoWhy's p-value (test_significance: a normal test of the
    estimate against the refuter's simulated estimates, one-sided, ALPHA its significance
    level). Outcome units throughout. tol = max(half, 10 % of |est|).

    placebo_treatment_refuter (DoWhy: with the treatment permuted the effect must go to zero):
    passes when |new| <= tol and, when the interval excludes 0 (the estimate claims an effect),
    |new| <= PLACEBO_SHARE x |est| (a placebo as large as the estimate means the estimate is
    what a shuffled treatment gives). DoWhy's p here measures how unlike the placebo effects the
    estimate is; it is reported, not judged.
    random_common_cause (DoWhy: an independent random confounder must not change the
    estimate): passes when |new - est| <= tol. Its simulations barely differ from each other,
    so DoWhy's p is small for shifts of no practical size; it is reported, not judged.
    data_subset_refuter (DoWhy: on random subsets the estimate must stay, i.e. lie within the
    subset estimates' distribution): raises doubt when |new - est| > tol, or when DoWhy's
    p <= ALPHA and the shift exceeds subset_spread(half), the spread a stable estimate shows
    on one subset (the mean of the simulations is steadier still): a small p alone can flag a
    shift too small to matter, a shift alone can be chance.
    """
    if new is None or not math.isfinite(new):
        return "raises doubt", _("the refuter produced no estimate")
    tol = max(half, 0.1 * abs(est))
    p_ok = p is not None and math.isfinite(p)
    if kind == "placebo_treatment_refuter":
        zero_in = ci[0] <= 0 <= ci[1] if ci is not None else abs(est) <= half
        # an estimate that claims an effect (its interval excludes 0) passes only when the
        # placebo's is at most half of it: a placebo of -0.068 beside an estimate of -0.07 was
        # "within the half-width" and passed, though it says the estimate is what a shuffled
        # treatment gives (issue 35)
        ok = abs(new) <= tol and (zero_in or abs(new) <= PLACEBO_SHARE * abs(est))
        why = (_("with {treatment} shuffled (a placebo with no effect by construction) the effect "
               "is {new}, {x} against the estimate "
               "{est} (interval half-width {half:.3g})").format(treatment=label(treatment, False), new=_num(new), x=_('near zero') if ok else _('far from zero'), est=_num(est), half=half))
        if ok and zero_in:
            why += (_("; the estimate's own interval includes zero too, so this check cannot tell "
                    "an effect from none"))
    elif kind == "random_common_cause":
        ok = abs(new - est) <= tol
        why = (_("adding a random common cause moves the estimate from {est} to "
               "{new}").format(est=_num(est), new=_num(new)) + (_(" (within its interval)") if ok else _(", outside its interval")))
    else:
        shift, spread = abs(new - est), subset_spread(half)
        far = shift > tol
        shifted = p_ok and p <= ALPHA and shift > spread
        ok = not (far or shifted)
        why = (_("on random {SUBSET_FRACTION:.0%} subsets the estimate is {new} on average "
               "against {est}").format(SUBSET_FRACTION=SUBSET_FRACTION, new=_num(new), est=_num(est)))
        if ok:
            why += _(" (stable)")
        elif far:
            why += _(": it depends on which rows are used")
        else:
            why += (_(": it moves by {shift:.3g}, more than the {spread:.3g} a stable estimate "
                    "moves on one subset, and DoWhy's test puts the full-data estimate outside "
                    "the subsets' estimates: it depends on which rows are used").format(shift=shift, spread=spread))
    return ("passes" if ok else "raises doubt"), why + _p_text(p)


VERDICTS = (N_("passes"), N_("raises doubt"), N_("could not run"))  # shown translated
