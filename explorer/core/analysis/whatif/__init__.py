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
   adjustment variable, its value plus a cubic spline of its rank (2 interior knots); _basis.
   When the logistic fit does not converge (quasi-separation: a range without any 0 or any 1),
   it is refitted with a small ridge penalty (RIDGE) and the result's warnings say so. The fits
   are numpy Newton-Raphson / normal equations (statsmodels gives the same numbers, 10x slower).
3. Scenario for the selected rows (default: the bad group): each case moves from its own
   observed t_i (control value "observed") to the set value v (treatment value).
   Continuous outcome (additive noise): y_i' = y_i + m(v, W_i) - m(t_i, W_i).
   Binary outcome: latent-threshold model y = 1[U < p(t, W)] with the same U for both worlds
   (a monotone effect; Pearl, Causality 2nd ed. s. 9.2): a case that failed fails under v with
   probability p_v / p_t when p_v <= p_t; a case that succeeded fails with probability
   (p_v - p_t) / (1 - p_t) when p_v > p_t. The mean of these over all rows equals mean p_v.
   estimate = mean(y_i' - y_i); predicted_outcome = observed_outcome + estimate.
4. Interval: seeded parametric bootstrap (King, Tomz & Wittenberg 2000): N_DRAWS draws of the
   coefficients from N(beta_hat, Cov(beta_hat)), the estimate recomputed per draw, 2.5/97.5
   percentiles. The observed outcomes of the selected cases are data, not resampled.
5. Refuters (DoWhy): placebo_treatment_refuter (treatment permuted), random_common_cause,
   data_subset_refuter (80 %), N_SIMULATIONS simulations each, seeded. Verdicts: see
   `_verdict`.

whatif_scale() answers the SLA question "queue_ms 20 % lower: attainment from A to B" with the
same identification and linear additive-noise counterfactuals (see its docstring).
"""
from __future__ import annotations

import logging
import math
import os
import sys
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from ...errors import NoData, TraceExplorerError
from ..causal_graph import CausalGraph, default_graph_text, parse_graph

#: Simulations per refuter (DoWhy's default is 100; 10 keeps estimate + 3 refuters on 50k rows
#: under 3 s on one core (bench/whatif.py) and is enough for a mean of the refuted estimate).
N_SIMULATIONS = 10
#: Coefficient draws of the parametric bootstrap interval.
N_DRAWS = 400
CONFIDENCE = 0.95
#: Fewest usable rows an estimate is attempted on.
MIN_ROWS = 30
#: Knots of the treatment's and of each adjustment variable's spline (see _basis).
N_KNOTS_TREATMENT = 5
N_KNOTS_ADJUST = 4
#: Share of rows each data-subset refutation keeps.
SUBSET_FRACTION = 0.8

#: Default SLA thresholds of `sla_met` and whatif_scale when analysis.sla is not importable;
#: otherwise its DEFAULT_THRESHOLDS are used, so the what-if and the SLA panel agree.
DEFAULT_SLA = {"ttft_ms": 500.0, "tpot_ms": 50.0}


def default_sla() -> dict[str, float]:
    """The SLA thresholds used when none are given: analysis.sla.DEFAULT_THRESHOLDS (ms)."""
    try:
        from ..sla import DEFAULT_THRESHOLDS
        return dict(DEFAULT_THRESHOLDS)
    except Exception:  # noqa: BLE001 - that module is another engineer's; fall back
        return dict(DEFAULT_SLA)

_PROGRESS_STEPS = 5


class WhatIfError(TraceExplorerError):
    """The what-if cannot be answered as asked (unknown metric, unidentifiable effect...).

    The message says why in words fit for the user.
    """


class Cancelled(TraceExplorerError):
    """The caller's cancelled() returned True."""


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


@dataclass(frozen=True)
class WhatIfResult:
    """Result of run_whatif; .to_dict() is the report's `whatif` section (DESIGN.md).

    estimate, ci_low, ci_high: mean effect on the outcome (outcome units) of moving each
    selected case from its observed treatment to `set_value`; predicted_outcome (+ interval):
    mean outcome of the selected cases under do(treatment = set_value); observed_outcome: their
    observed mean. n: rows used to fit; n_selected: rows the scenario applies to; n_dropped:
    rows dropped for missing values.
    """
    treatment: str
    outcome: str
    set_value: float
    common_causes: tuple[str, ...]
    estimate: float
    ci_low: float
    ci_high: float
    observed_outcome: float
    predicted_outcome: float
    predicted_ci_low: float
    predicted_ci_high: float
    refutations: tuple[Refutation, ...]
    assumptions: tuple[str, ...]
    n: int
    n_selected: int
    n_dropped: int
    method: str
    outcome_kind: str                      # "binary" | "continuous"
    unobserved: tuple[str, ...] = ()
    observed_treatment_mean: float | None = None
    naive_difference: float | None = None  # unadjusted slope x mean shift, for comparison
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "treatment": self.treatment,
            "outcome": self.outcome,
            "common_causes": list(self.common_causes),
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "refutations": [r.to_dict() for r in self.refutations],
            "scenario": {
                "set": {self.treatment: self.set_value},
                "predicted_outcome": self.predicted_outcome,
                "ci_low": self.predicted_ci_low,
                "ci_high": self.predicted_ci_high,
            },
            "observed_outcome": self.observed_outcome,
            "observed_treatment_mean": self.observed_treatment_mean,
            "naive_difference": self.naive_difference,
            "outcome_kind": self.outcome_kind,
            "assumptions": list(self.assumptions),
            "n": self.n,
            "n_selected": self.n_selected,
            "n_dropped": self.n_dropped,
            "unobserved": list(self.unobserved),
            "method": self.method,
            "warnings": list(self.warnings),
        }


# ---- DoWhy, lazily ------------------------------------------------------------------------------

_dowhy_lock = threading.Lock()
_estimator_cls = None


def preload() -> None:
    """Import DoWhy (takes seconds) with matplotlib's cache in a writable place and DoWhy's
    logging silenced. Safe to call from any thread, any number of times."""
    _scenario_estimator_class()


def _import_dowhy():
    # DoWhy imports matplotlib.pyplot; in a Qt app matplotlib would pick its Qt backend and
    # touch Qt from this worker thread (a segfault under pytest-qt). Nothing here draws with
    # matplotlib, so the non-interactive Agg backend is chosen unless the user set one.
    if "matplotlib.pyplot" not in sys.modules:
        os.environ.setdefault("MPLBACKEND", "agg")
    if not os.environ.get("MPLCONFIGDIR"):
        d = os.path.join(tempfile.gettempdir(), f"trace-explorer-mpl-{os.getuid()}"
                         if hasattr(os, "getuid") else "trace-explorer-mpl")
        os.makedirs(d, exist_ok=True)
        os.environ["MPLCONFIGDIR"] = d
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import dowhy  # noqa: F401
        from dowhy.causal_estimators.regression_estimator import RegressionEstimator
    for name in ("dowhy", "dowhy.causal_model", "dowhy.causal_refuter", "dowhy.causal_refuters",
                 "dowhy.causal_estimator", "dowhy.causal_identifier", "dowhy.causal_graph"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return RegressionEstimator


def _scenario_estimator_class():
    """The DoWhy estimator class (built on first use, so that DoWhy is imported lazily)."""
    global _estimator_cls
    with _dowhy_lock:
        if _estimator_cls is not None:
            return _estimator_cls
        RegressionEstimator = _import_dowhy()
        from dowhy.causal_estimator import CausalEstimate

        class ScenarioRegressionEstimator(RegressionEstimator):
            """Backdoor regression estimator of the effect of moving each target unit from its
            observed treatment to `treatment_value` (control_value "observed").

            Outcome model: logistic (binary outcome) or OLS on splines of t and W (see module
            doc); the estimate is the mean counterfactual change over the target units.
            init params: binary (bool), selected_col (name of a 0/1 column marking target
            units; all rows when missing).
            """

            def __init__(self, identified_estimand, binary=False, selected_col=None, **kwargs):
                super().__init__(identified_estimand, binary=binary, selected_col=selected_col,
                                 **kwargs)
                self.binary = bool(binary)
                self.selected_col = selected_col

            def construct_symbolic_estimator(self, estimand):
                link = "logit" if self.binary else "identity"
                w = estimand.get_adjustment_set()
                t = estimand.treatment_variable[0]
                return (f"b: {estimand.outcome_variable[0]} ~ {link}^-1(s({t})"
                        + "".join(f" + s({x})" for x in w) + ")")

            def _columns(self):
                return (self._target_estimand.treatment_variable[0],
                        list(self._target_estimand.get_adjustment_set()))

            def _scales(self, data):
                """Feature maps per column, fitted on `data`; maps already fitted (this
                estimator's, inherited by the refuters' deep copies) are kept: a refit on a
                subset or with a placebo column uses the same fixed features for the others."""
                t, w = self._columns()
                sc = dict(getattr(self, "_sc", None) or {})
                for c in [t] + w:
                    if c not in sc:
                        sc[c] = _basis(data[c].to_numpy(dtype=float),
                                       N_KNOTS_TREATMENT if c == t else N_KNOTS_ADJUST,
                                       ranks=c != t)
                return sc

            def _build_features(self, data_df, treatment_values=None):
                t, w = self._columns()
                if getattr(self, "_sc", None) is None or any(c not in self._sc for c in [t] + w):
                    self._sc = self._scales(data_df)
                tv = (data_df[t].to_numpy(dtype=float) if treatment_values is None
                      else np.broadcast_to(np.asarray(treatment_values, dtype=float),
                                           (len(data_df),)))
                cols = [np.ones((len(data_df), 1)), self._sc[t](tv)]
                for c in w:
                    cols.append(self._sc[c](data_df[c].to_numpy(dtype=float)))
                return np.hstack(cols)

            def _build_model(self, data):
                self._sc = self._scales(data)
                X = self._build_features(data)
                y = data[self._target_estimand.outcome_variable[0]].to_numpy(dtype=float)
                if not self.binary:
                    return X, _fit_ols(X, y)
                prev = self.model   # refuters deep-copy a fitted estimator: warm start from it
                start = (prev.params if prev is not None and len(prev.params) == X.shape[1]
                         else None)
                ridge = prev.ridge if prev is not None else None
                return X, _fit_logistic_auto(X, y, start=start, ridge=ridge)

            def predict_fn(self, data, model, features):
                return model.predict(features)

            def _target(self, data):
                if self.selected_col and self.selected_col in data.columns:
                    return data[data[self.selected_col].to_numpy() == 1]
                return data

            def effects(self, data, treatment_value, betas):
                """Mean counterfactual change over the target units, one per coefficient row
                of `betas` (k x p array); returns a length-k array."""
                d = self._target(data)
                y = d[self._target_estimand.outcome_variable[0]].to_numpy(dtype=float)
                Xo = self._build_features(d)
                Xv = self._build_features(d, treatment_values=treatment_value)
                if not self.binary:
                    return (Xv - Xo).mean(axis=0) @ betas.T   # linear: mean of differences
                yc = y[:, None]
                out = np.empty(len(betas))
                for i in range(0, len(betas), 32):             # blocks of draws: n x 32
                    bt = betas[i:i + 32].T
                    po = 1.0 / (1.0 + np.exp(-np.clip(Xo @ bt, -35, 35)))
                    pv = 1.0 / (1.0 + np.exp(-np.clip(Xv @ bt, -35, 35)))
                    cf = np.where(pv <= po, yc * pv / np.maximum(po, 1e-12),
                                  yc + (1 - yc) * (pv - po) / np.maximum(1 - po, 1e-12))
                    out[i:i + 32] = (cf - yc).mean(axis=0)
                return out

            def estimate_effect(self, data, treatment_value=1, control_value="observed",
                                target_units=None, need_conditional_estimates=None, **_):
                self._target_units = target_units
                self._treatment_value = treatment_value
                self._control_value = control_value
                beta = np.asarray(self.model.params, dtype=float)[None, :]
                value = float(self.effects(data, treatment_value, beta)[0])
                est = CausalEstimate(
                    data=data, treatment_name=self._target_estimand.treatment_variable,
                    outcome_name=self._target_estimand.outcome_variable, estimate=value,
                    control_value=control_value, treatment_value=treatment_value,
                    conditional_estimates=None, target_estimand=self._target_estimand,
                    realized_estimand_expr=self.symbolic_estimator,
                    intercept=float(np.asarray(self.model.params)[0]))
                est.add_estimator(self)
                return est

            def interval(self, data, treatment_value, draws, level, seed):
                """Parametric-bootstrap interval of the estimate: (low, high)."""
                rng = np.random.default_rng(seed)
                beta = np.asarray(self.model.params, dtype=float)
                cov = np.asarray(self.model.cov_params(), dtype=float)
                cov = (cov + cov.T) / 2
                b = rng.multivariate_normal(beta, cov, size=draws, method="eigh")
                e = self.effects(data, treatment_value, b)
                a = (1 - level) / 2
                return float(np.quantile(e, a)), float(np.quantile(e, 1 - a))

        _estimator_cls = ScenarioRegressionEstimator
        return _estimator_cls


# ---- the analysis -------------------------------------------------------------------------------

class _Fit:
    """A fitted regression: params (p,), cov_params() (p x p), predict(X) (mean outcome).

    numpy instead of statsmodels: the refuters refit the model 30 times and statsmodels'
    SVD-based IRLS made that 10x slower on 50k rows."""

    def __init__(self, params, cov, logistic, iterations=1, converged=True, ridge=0.0):
        self.params = params
        self._cov = cov
        self.logistic = logistic
        self.iterations = iterations
        self.converged = converged
        self.ridge = ridge

    def cov_params(self):
        return self._cov

    def predict(self, X):
        eta = X @ self.params
        return 1.0 / (1.0 + np.exp(-np.clip(eta, -35, 35))) if self.logistic else eta

    def summary(self) -> str:
        kind = "logistic (Newton-Raphson)" if self.logistic else "OLS"
        return f"{kind}: params {np.round(self.params, 4).tolist()}, {self.iterations} iterations"


def _solve_spd(A, b):
    ridge = 1e-9 * (np.trace(A) / len(A) or 1.0)
    try:
        c = np.linalg.cholesky(A + ridge * np.eye(len(A)))
        return np.linalg.solve(c.T, np.linalg.solve(c, b))
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A) @ b


def _fit_ols(X: np.ndarray, y: np.ndarray) -> _Fit:
    """OLS by the normal equations; classical covariance s^2 (X'X)^-1."""
    XtX = X.T @ X
    beta = _solve_spd(XtX, X.T @ y)
    r = y - X @ beta
    s2 = float(r @ r) / max(1, len(y) - X.shape[1])
    return _Fit(beta, s2 * _solve_spd(XtX, np.eye(X.shape[1])), logistic=False)


#: L2 penalty of the logistic fit when the unpenalised fit does not converge (on every
#: coefficient but the intercept; the features have unit SD): keeps the fit finite under
#: quasi-separation (a spline region without any badcase, seen on the demo workload). It
#: shrinks the effect a little, so it is used only then, and the result says so.
RIDGE = 1.0


def _fit_logistic_auto(X: np.ndarray, y: np.ndarray, start=None, ridge: float | None = None) -> _Fit:
    """Unpenalised fit; when it does not converge (quasi-separation), the RIDGE fit. ridge given:
    use it directly (the refuters refit with the penalty the original estimate needed)."""
    if ridge is not None:
        return _fit_logistic(X, y, start=start, ridge=ridge)
    fit = _fit_logistic(X, y, start=start, ridge=0.0)
    return fit if fit.converged else _fit_logistic(X, y, ridge=RIDGE)


def _fit_logistic(X: np.ndarray, y: np.ndarray, max_iter: int = 50, tol: float = 1e-9,
                  start: np.ndarray | None = None, ridge: float = 0.0) -> _Fit:
    """Logistic regression by Newton-Raphson with step halving, maximising the log-likelihood
    minus ridge/2 * |beta[1:]|^2 (ridge=0: the plain maximum-likelihood fit statsmodels' GLM
    Binomial gives); covariance = inverse penalised Fisher information (X'WX + ridge I)^-1.
    start: initial coefficients (default: intercept at the logit of the mean outcome)."""
    p_ = X.shape[1]
    pen = np.full(p_, float(ridge))
    pen[0] = 0.0                                  # X[:, 0] is the intercept
    beta = np.zeros(p_)
    p0 = min(max(float(np.mean(y)), 1e-6), 1 - 1e-6)
    beta[0] = math.log(p0 / (1 - p0))
    if start is not None and len(start) == p_:
        beta = np.array(start, dtype=float)

    def objective(b):
        eta = np.clip(X @ b, -35, 35)
        return float(np.sum(y * eta - np.logaddexp(0, eta))) - 0.5 * float(pen @ (b * b))

    ll = objective(beta)
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        eta = np.clip(X @ beta, -35, 35)
        p = 1.0 / (1.0 + np.exp(-eta))
        w = np.maximum(p * (1 - p), 1e-10)
        step = _solve_spd(X.T @ (X * w[:, None]) + np.diag(pen), X.T @ (y - p) - pen * beta)
        t = 1.0
        while t > 1e-4:
            nb = beta + t * step
            nll = objective(nb)
            if nll >= ll - 1e-12:
                break
            t /= 2
        beta, delta, ll = nb, nll - ll, nll
        if abs(delta) < tol * (abs(ll) + 1):
            converged = True
            break
    p = 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -35, 35)))
    w = np.maximum(p * (1 - p), 1e-10)
    cov = _solve_spd(X.T @ (X * w[:, None]) + np.diag(pen), np.eye(p_))
    return _Fit(beta, cov, logistic=True, iterations=it, converged=converged, ridge=float(ridge))


def _cubic_spline(z: np.ndarray, k: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Cubic regression spline basis of z (truncated power form: z, z^2, z^3, (z - k_j)_+^3 for
    the interior knots k; Hastie, Tibshirani & Friedman, ESL 2nd ed., s. 5.2), continued
    linearly outside [lo, hi] (the data's range): B(z) = B(c) + B'(c) (z - c), c = clip(z)."""
    c = np.clip(z, lo, hi)
    out = np.empty((len(z), 3 + len(k)))
    c2 = c * c
    out[:, 0], out[:, 1], out[:, 2] = c, c2, c2 * c
    tails = []
    for j, kj in enumerate(k):
        m = np.maximum(c - kj, 0.0)
        tails.append(m)
        out[:, 3 + j] = m * m * m
    dz = z - c
    if dz.any():                                  # some z outside the range: extrapolate
        out[:, 0] += dz
        out[:, 1] += 2 * c * dz
        out[:, 2] += 3 * c2 * dz
        for j, m in enumerate(tails):
            out[:, 3 + j] += 3 * m * m * dz
    return out


def _basis(x: np.ndarray, n_knots: int, ranks: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    """Feature map of one variable, fitted on x, for more than 5 distinct values:
    ranks=True (adjustment variables): the standardised value z plus a cubic regression spline
    of its empirical CDF u = F(x) (n_knots knots at u = 0, 1/(n_knots-1), ..., 1; on ranks, a
    long tail such as prompt_tokens up to 128k cannot make the basis ill-conditioned; beyond
    the observed range u stays at 0 or 1 and z continues linearly);
    ranks=False (the treatment, whose scale the scenario is set on): a cubic regression spline
    of z with knots at the quantiles linspace(0, 1, n_knots), linear beyond the observed range.
    With 3-5 distinct values: z and z^2; a 0/1 variable: z. Columns are centred and scaled to
    unit SD."""
    xs = np.sort(x[:: max(1, len(x) // 5_000)])     # ranks and scales from <= ~10k rows
    mu, sd = float(np.mean(xs)), float(np.std(xs)) or 1.0
    uniq = np.unique(xs)
    if len(uniq) > 5 and not ranks:
        q = (np.quantile(xs, np.linspace(0, 1, n_knots)) - mu) / sd
        lo, hi = float(q[0]), float(q[-1])
        knots = np.unique(q[1:-1])
        knots = knots[(knots > lo) & (knots < hi)]

        def raw(v):
            return _cubic_spline((np.asarray(v, dtype=float) - mu) / sd, knots, lo, hi)
    elif len(uniq) > 5:
        probs = np.linspace(0, 1, 201)
        qs = np.quantile(xs, probs)
        qs, first = np.unique(qs, return_index=True)
        ps = probs[first]
        inner = np.linspace(0, 1, n_knots)[1:-1]

        def raw(v):
            v = np.asarray(v, dtype=float)
            u = np.interp(v, qs, ps)
            return np.column_stack([(v - mu) / sd, _cubic_spline(u, inner, 0.0, 1.0)])
    elif len(uniq) > 2:
        def raw(v):
            z = (np.asarray(v, dtype=float) - mu) / sd
            return np.column_stack([z, z * z])
    else:
        def raw(v):
            return ((np.asarray(v, dtype=float) - mu) / sd)[:, None]
    b = raw(xs)
    cmu, csd = b.mean(axis=0), b.std(axis=0)
    csd[csd == 0] = 1.0
    return lambda v: (raw(v) - cmu) / csd


def _is_binary(s: pd.Series) -> bool:
    v = pd.unique(s.dropna())
    return len(v) <= 2 and set(np.asarray(v, dtype=float).tolist()) <= {0.0, 1.0}


def add_sla_met(frame: pd.DataFrame, thresholds: dict[str, float] | None = None) -> pd.DataFrame:
    """Copy of frame with `sla_met` = 1 when every threshold metric is at or below its
    threshold (ms), 0 when one is above, NULL when one is missing. Default: default_sla(),
    limited to the metrics the frame has. Raises WhatIfError when it has none of them."""
    thresholds = thresholds or default_sla()
    th = {k: v for k, v in thresholds.items() if k in frame.columns}
    if not th:
        raise WhatIfError("SLA attainment needs one of " + ", ".join(thresholds)
                          + " in the data")
    out = frame.copy()
    ok = pd.Series(True, index=frame.index)
    miss = pd.Series(False, index=frame.index)
    for k, v in th.items():
        col = pd.to_numeric(frame[k], errors="coerce")
        miss |= col.isna()
        ok &= col.fillna(np.inf) <= v
    out["sla_met"] = pd.array(np.where(miss, pd.NA, ok.astype(int)), dtype="Int64")
    return out


def _backdoor_set(graph, g, data: pd.DataFrame, treatment: str, outcome: str,
                  observed_cols) -> list[str]:
    """The backdoor adjustment set DoWhy identifies on graph `g` (names as str).
    Raises WhatIfError naming the unobserved culprits when the effect is not identifiable."""
    from dowhy import CausalModel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CausalModel(data=data.iloc[:0], treatment=treatment, outcome=outcome, graph=g)
        estimand = model.identify_effect(proceed_when_unidentifiable=True)
    bd = estimand.get_backdoor_variables()
    if estimand.estimands.get("backdoor") is None or bd is None:
        raise WhatIfError(_why_unidentifiable(graph, treatment, outcome, set(observed_cols)))
    return [str(c) for c in bd]


def _why_unidentifiable(graph: CausalGraph, treatment: str, outcome: str,
                        observed: set[str]) -> str:
    """The user-facing reason backdoor identification failed, naming the unobserved nodes that
    reach both the treatment and the outcome through unobserved nodes only (so no observed
    variable can block them)."""
    import networkx as nx
    g = graph.to_networkx()
    hidden = {n for n in g.nodes if n not in observed or n in graph.latent}
    h = g.subgraph(hidden | {treatment, outcome}).copy()
    h.remove_edges_from(list(h.out_edges(treatment)))
    culprits = sorted(u for u in hidden - {treatment, outcome}
                      if nx.has_path(h, u, treatment) and nx.has_path(h, u, outcome))
    msg = (f"The effect of {treatment} on {outcome} cannot be identified by backdoor adjustment "
           f"with this graph: no set of observed variables blocks every backdoor path.")
    if culprits:
        msg += (" Unobserved common cause(s): " + ", ".join(culprits) + ". Measure them, or "
                "edit the graph if you believe they do not reach both variables.")
    return msg


def _check(cancelled, progress, step):
    if cancelled is not None and cancelled():
        raise Cancelled("what-if cancelled")
    if progress is not None:
        progress(step, _PROGRESS_STEPS)


def _verdict(kind: str, treatment: str, est: float, half: float, new: float | None,
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


def _one_blas_thread():
    """Context limiting BLAS to one thread: the Gram matrices here are tiny (p ~ 20) and a
    multi-threaded OpenBLAS on a loaded machine made each one 200x slower (0.8 s vs 3.5 ms for
    50k x 17, measured)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


def run_whatif(frame: pd.DataFrame, treatment: str = "kv_cache_hit_rate",
               outcome: str = "badcase", set_value: float | None = None,
               graph_text: str | None = None, selected: pd.Series | None = None,
               refute: bool = True, seed: int = 0, progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None, *,
               thresholds: dict[str, float] | None = None,
               num_simulations: int = N_SIMULATIONS) -> WhatIfResult:
    """Estimate what the outcome of the selected cases would be with the treatment set to
    `set_value` (see the module doc for the method).

    frame: one row per case (analysis.cohort_frame); treatment/outcome: column names (outcome
    `sla_met` is derived from `thresholds` when absent). set_value: scenario value in the
    treatment's units (default: the control group's mean treatment, or the median of all rows
    without a `grp` column). graph_text: DOT/GML (default resources/causal_graph.dot).
    selected: bool mask aligned with frame (default grp == 'bad', else every row). progress
    (done, total) and cancelled() are optional callbacks.
    Returns WhatIfResult. Raises InputError (bad graph, with line), WhatIfError (treatment or
    outcome unknown or not in the graph, effect not identifiable), NoData (too few usable rows,
    constant treatment, no selected row), Cancelled.
    """
    with _one_blas_thread():
        return _run_whatif(frame, treatment, outcome, set_value, graph_text, selected, refute,
                           seed, progress, cancelled, thresholds, num_simulations)


def _run_whatif(frame, treatment, outcome, set_value, graph_text, selected, refute, seed,
                progress, cancelled, thresholds, num_simulations) -> WhatIfResult:
    _check(cancelled, progress, 0)
    if outcome == "sla_met" and "sla_met" not in frame.columns:
        frame = add_sla_met(frame, thresholds)
    graph = parse_graph(graph_text if graph_text is not None else default_graph_text(),
                        known=frame.columns)
    for role, name in (("treatment", treatment), ("outcome", outcome)):
        if name not in graph.nodes:
            raise WhatIfError(f"The {role} '{name}' is not a node of the causal graph.")
        if name not in frame.columns:
            raise WhatIfError(f"The {role} '{name}' is not in the data.")
        if name in graph.latent:
            raise WhatIfError(f"The {role} '{name}' is marked latent in the graph.")
    if treatment == outcome:
        raise WhatIfError("Treatment and outcome must differ.")
    import networkx as nx
    g = graph.to_networkx()
    warn: list[str] = []

    observed_cols = [n for n in graph.nodes if n in frame.columns and n not in graph.latent]
    unobserved = tuple(graph.unobserved(frame.columns))
    data = frame[observed_cols].apply(pd.to_numeric, errors="coerce").astype(float)
    if selected is None:
        sel = (frame["grp"] == "bad") if "grp" in frame.columns else pd.Series(True, frame.index)
        if not sel.any():
            sel = pd.Series(True, frame.index)
    else:
        sel = pd.Series(selected, index=frame.index).fillna(False).astype(bool)
    if set_value is None:
        ctl = frame["grp"] == "control" if "grp" in frame.columns else ~sel
        base = data.loc[ctl, treatment].dropna() if ctl.any() else data[treatment].dropna()
        if base.empty:
            base = data[treatment].dropna()
        if base.empty:
            raise NoData(f"No case has a value of {treatment}.")
        set_value = float(base.mean() if ctl.any() else base.median())
        warn.append(f"No scenario value given: {treatment} is set to the control group's mean, "
                    f"{set_value:.3g}.")
    set_value = float(set_value)

    if not nx.has_path(g, treatment, outcome):
        raise WhatIfError(f"The graph has no directed path from {treatment} to {outcome}: by its "
                          f"assumptions the effect is zero. Add an edge if you believe otherwise.")

    # ---- identification (DoWhy) ----
    _check(cancelled, progress, 1)
    Est = _scenario_estimator_class()
    from dowhy import CausalModel
    from dowhy.causal_estimator import estimate_effect as dowhy_estimate

    adjust = _backdoor_set(graph, g, data, treatment, outcome, observed_cols)
    used = [treatment, outcome] + adjust
    keep = data[used].notna().all(axis=1)
    n_dropped = int((~keep).sum())
    if n_dropped:
        warn.append(f"{n_dropped} of {len(data)} rows dropped: missing "
                    + ", ".join(c for c in used if data[c].isna().any()) + ".")
    d = data.loc[keep, used].copy()
    d["__selected"] = sel[keep].astype(int).to_numpy()
    if len(d) < MIN_ROWS:
        raise NoData(f"Only {len(d)} cases have {', '.join(used)} all recorded; the what-if "
                     f"needs at least {MIN_ROWS}.")
    if d[treatment].nunique() < 2:
        raise NoData(f"{treatment} takes a single value in the usable cases; its effect cannot "
                     f"be estimated.")
    n_sel = int(d["__selected"].sum())
    if n_sel == 0:
        raise NoData("None of the selected cases has every variable the what-if needs.")
    binary = _is_binary(d[outcome])
    if binary:
        d[outcome] = d[outcome].astype(int)
    lo_obs, hi_obs = float(d[treatment].min()), float(d[treatment].max())
    if not lo_obs <= set_value <= hi_obs:
        warn.append(f"{treatment} = {set_value:.3g} lies outside the observed range "
                    f"[{lo_obs:.3g}, {hi_obs:.3g}]: the prediction is an extrapolation.")

    # ---- estimate (DoWhy) ----
    _check(cancelled, progress, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CausalModel(data=d, treatment=treatment, outcome=outcome, graph=g)
        estimand = model.identify_effect(proceed_when_unidentifiable=True)
        estimand.set_identifier_method("backdoor")
        estimator = Est(estimand, binary=binary, selected_col="__selected")
        estimate = dowhy_estimate(d, treatment, outcome, "backdoor", estimator,
                                  control_value="observed", treatment_value=set_value,
                                  target_units="ate", method_params={})
    est = float(estimate.value)
    lo, hi = estimator.interval(d, set_value, N_DRAWS, CONFIDENCE, seed)
    ds = d[d["__selected"] == 1]
    observed = float(ds[outcome].mean())
    # unadjusted comparison: slope of outcome on treatment alone x mean shift of the selection
    tt, yy = d[treatment].to_numpy(), d[outcome].to_numpy(dtype=float)
    slope = float(np.polyfit(tt, yy, 1)[0])
    naive = slope * float(set_value - ds[treatment].mean())

    refs: list[Refutation] = []
    if refute:
        half = (hi - lo) / 2
        labels = {"placebo_treatment_refuter": "Placebo treatment",
                  "random_common_cause": "Random common cause",
                  "data_subset_refuter": "Data subset"}
        for step, name in enumerate(labels, start=3):
            _check(cancelled, progress, step)
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
                verdict, why = _verdict(name, treatment, est, half, new, p)
            except Exception as exc:   # a refuter failing is a finding, not a crash
                new, p, verdict, why = None, None, "raises doubt", f"the refuter failed: {exc}"
            refs.append(Refutation(name, labels[name], new, p, verdict, why))
    _check(cancelled, progress, _PROGRESS_STEPS)

    pred = observed + est
    plo, phi = observed + lo, observed + hi
    if binary:
        pred, plo, phi = (min(1.0, max(0.0, x)) for x in (pred, plo, phi))
    kind = "binary" if binary else "continuous"
    ridge = getattr(estimator.model, "ridge", 0.0)
    if binary and ridge:
        warn.append(f"Some range of the variables has (almost) no {outcome} = 1 or no "
                    f"{outcome} = 0 (quasi-separation): the logistic fit needed a ridge penalty "
                    f"({ridge:g}), which pulls the effect slightly towards zero.")
    if binary and not getattr(estimator.model, "converged", True):
        warn.append("The logistic fit did not converge; treat the interval with care.")
    model_txt = ((f"logistic regression (penalised maximum likelihood, ridge {ridge:g})" if ridge
                  else "logistic regression (maximum likelihood)") if binary
                 else "linear regression (OLS)")
    method = (f"DoWhy backdoor adjustment; {model_txt} of {outcome} on a cubic spline of "
              f"{treatment} and, per adjustment variable, its value and a spline of its rank; "
              f"interval: parametric bootstrap, {N_DRAWS} draws, seed {seed}")
    assumptions = [
        f"The causal graph is right: every common cause of {treatment} and {outcome} is drawn, "
        f"and the adjustment set ({', '.join(adjust) or 'empty'}) blocks every backdoor path.",
        f"No other case's {treatment} affects this case (no interference); with a shared KV "
        f"cache this holds only approximately: the scenario changes these cases alone.",
        f"The outcome model fits: {model_txt}, smooth (spline) in {treatment} and in "
        f"each adjustment variable, without interactions between them.",
        f"Positivity: cases like the selected ones are seen with {treatment} near "
        f"{set_value:.3g} (observed range {lo_obs:.3g} to {hi_obs:.3g}).",
        "Rows with missing values are missing at random.",
    ]
    if binary:
        assumptions.append(
            f"Monotone effect: each case responds to {treatment} in the same direction (a "
            f"latent-threshold model), so a failed case fails under the scenario with "
            f"probability p(set) / p(observed).")
    return WhatIfResult(
        treatment=treatment, outcome=outcome, set_value=set_value,
        common_causes=tuple(adjust), estimate=est, ci_low=lo, ci_high=hi,
        observed_outcome=observed, predicted_outcome=float(pred),
        predicted_ci_low=float(plo), predicted_ci_high=float(phi),
        refutations=tuple(refs), assumptions=tuple(assumptions), n=int(len(d)),
        n_selected=n_sel, n_dropped=n_dropped, method=method, outcome_kind=kind,
        unobserved=unobserved, observed_treatment_mean=float(ds[treatment].mean()),
        naive_difference=naive, warnings=tuple(warn))


# ---- scaling scenarios for SLA windows ------------------------------------------------------------

@dataclass(frozen=True)
class ScaleResult:
    """Result of whatif_scale: SLA attainment (share of rows meeting every threshold, 0..1)
    observed and with `metric` multiplied by `factor`, with the interval of the latter.

    slopes: per SLA metric, the effect of one unit of `metric` on it (1.0 for the metric
    itself, 0.0 when the graph has no path); common_causes: the adjustment set used per metric.
    """
    metric: str
    factor: float
    thresholds: dict[str, float]
    attainment_before: float
    attainment_after: float
    ci_low: float
    ci_high: float
    n: int
    n_dropped: int
    slopes: dict[str, float]
    common_causes: dict[str, list[str]]
    assumptions: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """One line for the user: "queue_ms 20% lower: SLA attainment from 0.81 to 0.87 (95% CI
        0.86 to 0.88)"."""
        pct = (self.factor - 1) * 100
        way = "lower" if pct < 0 else "higher"
        return (f"{self.metric} {abs(pct):.0f}% {way}: SLA attainment from "
                f"{self.attainment_before:.2f} to {self.attainment_after:.2f} "
                f"({CONFIDENCE:.0%} CI {self.ci_low:.2f} to {self.ci_high:.2f})")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        d["warnings"] = list(self.warnings)
        d["text"] = self.text
        return d


def whatif_scale(frame: pd.DataFrame, metric: str, factor: float,
                 thresholds: dict[str, float] | None = None, graph_text: str | None = None,
                 selected: pd.Series | None = None, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> ScaleResult:
    """SLA attainment if `metric` were `factor` times its observed value for every selected row
    ("queue_ms 20% lower" is factor=0.8).

    thresholds: {metric: max value} in the metric's unit (default default_sla(), limited to
    the columns present). Each threshold metric that the graph puts downstream of `metric` moves by
    b * (factor - 1) * metric_i, where b is its backdoor-adjusted linear effect (DoWhy
    identification on the graph, OLS with the adjustment set; additive noise); the metric itself
    moves to factor * metric_i; the others stay. Interval: parametric bootstrap of the slopes
    (N_DRAWS draws, seeded). selected: bool mask (default every row).
    Raises InputError (bad graph), WhatIfError (metric unknown), NoData (no usable row).
    """
    with _one_blas_thread():
        return _whatif_scale(frame, metric, factor, thresholds, graph_text, selected, seed,
                             progress, cancelled)


def _whatif_scale(frame, metric, factor, thresholds, graph_text, selected, seed, progress,
                  cancelled) -> ScaleResult:
    thresholds = thresholds or default_sla()
    th = {k: float(v) for k, v in thresholds.items() if k in frame.columns}
    if not th:
        raise WhatIfError("SLA attainment needs one of " + ", ".join(thresholds) + " in the data.")
    if metric not in frame.columns:
        raise WhatIfError(f"'{metric}' is not in the data.")
    if not (math.isfinite(factor) and factor >= 0):
        raise WhatIfError(f"The scaling factor must be a non-negative number, not {factor}.")
    graph = parse_graph(graph_text if graph_text is not None else default_graph_text(),
                        known=frame.columns)
    if metric not in graph.nodes:
        raise WhatIfError(f"'{metric}' is not a node of the causal graph.")
    import networkx as nx
    g = graph.to_networkx()
    observed_cols = [n for n in graph.nodes if n in frame.columns and n not in graph.latent]
    cols = list(dict.fromkeys(observed_cols + [metric] + list(th)))
    data = frame[cols].apply(pd.to_numeric, errors="coerce").astype(float)
    sel = (pd.Series(True, index=frame.index) if selected is None
           else pd.Series(selected, index=frame.index).fillna(False).astype(bool))
    warn: list[str] = []
    slopes: dict[str, float] = {}
    ses: dict[str, float] = {}
    adjust_by: dict[str, list[str]] = {}
    desc = nx.descendants(g, metric)
    steps = len(th) + 1
    for i, m in enumerate(th):
        if cancelled is not None and cancelled():
            raise Cancelled("what-if cancelled")
        if progress is not None:
            progress(i, steps)
        if m == metric:
            slopes[m], ses[m], adjust_by[m] = 1.0, 0.0, []
            continue
        if m not in desc:
            slopes[m], ses[m], adjust_by[m] = 0.0, 0.0, []
            continue
        _scenario_estimator_class()
        adj = _backdoor_set(graph, g, data, metric, m, observed_cols)
        sub = data[[metric, m] + adj].dropna()
        if len(sub) < MIN_ROWS:
            raise NoData(f"Only {len(sub)} rows have {metric}, {m} and the adjustment set.")
        X = np.column_stack([np.ones(len(sub)), sub[[metric] + adj].to_numpy()])
        y = sub[m].to_numpy()
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        resid = y - X @ beta
        s2 = float(resid @ resid) / max(1, len(y) - X.shape[1])
        cov = s2 * np.linalg.pinv(X.T @ X)
        slopes[m], ses[m], adjust_by[m] = float(beta[1]), float(math.sqrt(max(cov[1, 1], 0))), adj
    keep = data[[metric] + list(th)].notna().all(axis=1) & sel
    n_dropped = int((sel & ~keep).sum())
    if n_dropped:
        warn.append(f"{n_dropped} selected rows dropped: missing {metric} or a threshold metric.")
    d = data.loc[keep]
    if d.empty:
        raise NoData(f"No selected row has {metric} and {', '.join(th)} all recorded.")
    x = d[metric].to_numpy()
    shift = (factor - 1.0) * x

    def attain(slope_draws: dict[str, np.ndarray]) -> np.ndarray:
        k = len(next(iter(slope_draws.values())))
        ok = np.ones((len(d), k), dtype=bool)
        for m, thr in th.items():
            ok &= (d[m].to_numpy()[:, None] + slope_draws[m][None, :] * shift[:, None]) <= thr
        return ok.mean(axis=0)

    before = float((d[list(th)].to_numpy() <= np.array(list(th.values()))).all(axis=1).mean())
    after = float(attain({m: np.array([slopes[m]]) for m in th})[0])
    rng = np.random.default_rng(seed)
    draws = {m: slopes[m] + ses[m] * rng.standard_normal(N_DRAWS) for m in th}
    a = attain(draws)
    lo, hi = (float(np.quantile(a, (1 - CONFIDENCE) / 2)),
              float(np.quantile(a, 1 - (1 - CONFIDENCE) / 2)))
    if progress is not None:
        progress(steps, steps)
    if all(slopes[m] == 0.0 for m in th):
        warn.append(f"The graph has no path from {metric} to any SLA metric "
                    f"({', '.join(th)}): attainment cannot change.")
    assumptions = (
        "The causal graph is right, and each adjustment set blocks every backdoor path.",
        f"Each SLA metric responds linearly to {metric}, with the case's own deviation (noise) "
        f"unchanged by the scenario (additive noise).",
        "No interference: scaling these requests does not change the others.",
    )
    return ScaleResult(metric=metric, factor=float(factor), thresholds=th,
                       attainment_before=before, attainment_after=after, ci_low=min(lo, after),
                       ci_high=max(hi, after), n=int(len(d)), n_dropped=n_dropped,
                       slopes=slopes, common_causes=adjust_by, assumptions=assumptions,
                       warnings=tuple(warn))
