"""Counterfactual what-if: "set kv_cache_hit_rate to 0.67 for these cases, what happens to the
error rate?", answered with DoWhy (identification by the backdoor criterion on a causal graph,
regression estimation, three refuters) and an interval.

Pure functions, Qt-free. DoWhy is imported lazily (importing it takes seconds): call
`preload()` from a worker thread before the first analysis if the caller cares.

Method (what the numbers mean)
------------------------------
frame: one row per case (analysis.cohort_frame): `badcase` 0/1, `grp` ('bad'|'control'), the
request metrics. Rows with NULL treatment, outcome or adjustment variables are dropped (counted
in `n_dropped`).

1. Identification. DoWhy's CausalModel on the graph (nodes absent from the frame or marked
   latent are unobserved) and identify_effect(): a backdoor adjustment set W. When no observed
   set blocks every backdoor path, `WhatIfError` says which unobserved causes are to blame.
2. Outcome model m(t, W). A DoWhy RegressionEstimator subclass fitted on all usable rows:
   logistic (maximum likelihood) for a 0/1 outcome, OLS otherwise; features: a cubic
   regression spline of t (3 interior knots at its quartiles, linear beyond its range) and, per
   adjustment variable, its value plus a cubic spline of its rank (2 interior knots);
   splines.spline_basis.
   When the logistic fit does not converge (quasi-separation: a range without any 0 or any 1),
   it is refitted with an L2 penalty on the splines' curvature columns only (each variable's
   linear column and the intercept stay free, so the curves bend towards straight lines and
   the effect is not pulled towards zero), the penalty chosen from RIDGE_GRID by 5-fold
   cross-validation; the result's warnings say so, and the interval is widened to hold the
   estimate should the draws miss it. The fits
   are numpy Newton-Raphson / normal equations (statsmodels gives the same numbers, 10x slower).
3. Scenario for the selected rows (default: the bad group): each case moves from its own
   observed t_i (control value "observed") to the set value v (treatment value).
   Continuous outcome (additive noise): y_i' = y_i + m(v, W_i) - m(t_i, W_i).
   Binary outcome: the change of the outcome's probability of cases like them, p(v, W_i) -
   p(t_i, W_i) (g-computation). Not the monotone counterfactual given the observed outcome: the
   default selection is the badcases, every one of which can only lose its failure under that
   model, so the estimate was <= 0 for a fitted slope of either sign and its interval never
   held 0 when the treatment has no effect (issue 35).
   estimate = mean(y_i' - y_i); predicted_outcome = observed_outcome + estimate.
4. Interval: seeded parametric bootstrap (King, Tomz & Wittenberg 2000): N_DRAWS draws of the
   coefficients from N(beta_hat, Cov(beta_hat)) (via its Cholesky factor), the estimate
   recomputed per draw, 2.5/97.5 percentiles. The observed outcomes of the selected cases are
   data, not resampled. An interval including 0 is said in the warnings.
5. Refuters (DoWhy): placebo_treatment_refuter (treatment permuted), random_common_cause,
   data_subset_refuter (80 %), N_SIMULATIONS simulations each, seeded (one RandomState per
   refuter, so each simulation draws its own permutation / subset). Verdicts: see
   refute.verdict. Past REFUTE_ROWS usable rows (each refuter refits N_SIMULATIONS times) they
   run on a stratified random sample of REFUTE_ROWS rows (by outcome and selection, seeded)
   with the same features and penalty, its own estimate and interval; the result's
   `refute_sample` gives its size, its estimate and that estimate's expected distance from
   the full-data one (refute.subset_spread), and a warning says so. Steps 2-4 always use
   every row.

Determinism: the same frame content and seed give the same result to the last digit in every
process: rows are taken in case_id order, the adjustment set (a Python set inside DoWhy, whose
order follows PYTHONHASHSEED) is sorted, BLAS runs on one thread, every draw is seeded.

whatif_scale() answers the SLA question "queue_ms 20 % lower: attainment from A to B" with the
same identification and linear additive-noise counterfactuals (see its docstring).

Modules (a step above -> where it lives)
----------------------------------------
scenario.py    run_whatif, WhatIfResult: checks, steps 1-5 end to end, method / assumptions text
estimator.py   the DoWhy estimator (steps 2-4: outcome model, counterfactuals, interval);
               preload() and DoWhy's lazy import
fits.py        OLS and logistic (Newton-Raphson, CV-chosen penalty) fits in numpy; one BLAS thread
splines.py     the spline feature maps of step 2
identify.py    step 1: the backdoor set, or why there is none
refute.py      step 5: the refuters and their verdicts (Refutation)
scale.py       whatif_scale, ScaleResult
sla_met.py     default SLA thresholds (ms) and the derived `sla_met` outcome column
constants.py   simulation / draw counts, interval level, fewest rows, knots, subset share
exceptions.py  WhatIfError, Cancelled
Importing the package imports none of DoWhy, sklearn, statsmodels (nor Qt).
"""
from __future__ import annotations

from .constants import (CONFIDENCE, MIN_ROWS, N_DRAWS, N_KNOTS_ADJUST, N_KNOTS_TREATMENT,
                        N_SIMULATIONS, REFUTE_ROWS, SUBSET_FRACTION)
from .estimator import preload
from ...errors import Cancelled  # the project's one cancellation type, re-exported
from .exceptions import WhatIfError
from .fits import RIDGE_GRID
from .refute import Refutation
from .scale import ScaleResult, whatif_scale
from .scenario import WhatIfResult, run_whatif
from .sla_met import DEFAULT_SLA, add_sla_met, default_sla

__all__ = ["CONFIDENCE", "DEFAULT_SLA", "MIN_ROWS", "N_DRAWS", "N_KNOTS_ADJUST",
           "N_KNOTS_TREATMENT", "N_SIMULATIONS", "REFUTE_ROWS", "RIDGE_GRID", "SUBSET_FRACTION", "Cancelled",
           "Refutation", "ScaleResult", "WhatIfError", "WhatIfResult", "add_sla_met",
           "default_sla", "preload", "run_whatif", "whatif_scale"]
