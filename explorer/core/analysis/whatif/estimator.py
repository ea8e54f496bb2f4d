"""The DoWhy estimator of the what-if, and DoWhy's lazy import.

ScenarioRegressionEstimator (a RegressionEstimator subclass, built on first use by
scenario_estimator_class so that importing this package does not import DoWhy):
- outcome model m(t, W): logistic (fits.fit_logistic_auto: unpenalised, or under
  quasi-separation a cross-validated penalty on the curvature columns) for a 0/1 outcome, OLS
  (fits.fit_ols) otherwise, on [1, spline of t, per adjustment variable its value and a spline
  of its rank] (splines.spline_basis; N_KNOTS_TREATMENT, N_KNOTS_ADJUST);
- effects(): mean counterfactual change of the target units (`selected_col` == 1) moved from
  their observed t_i to treatment_value. Continuous outcome (additive noise): m(v, W_i) -
  m(t_i, W_i). Binary outcome: the change of the outcome's probability of cases like them,
  p(v, W_i) - p(t_i, W_i) (g-computation over the target units), not the counterfactual given
  their observed outcome (with the badcases selected that one can only fall: <= 0 whatever the
  fitted slope, so its interval never held 0);
- interval(): seeded parametric bootstrap (King, Tomz & Wittenberg 2000): coefficient draws
  from N(beta_hat, Cov(beta_hat)), effects recomputed per draw, the central `level` quantiles.
Units: the outcome's (a share 0..1 for a 0/1 outcome); t in the treatment's units.

preload() imports DoWhy (seconds) with matplotlib's cache in a writable place, the Agg backend
and DoWhy's logging silenced.
"""
from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
import warnings

import numpy as np

from .constants import N_KNOTS_ADJUST, N_KNOTS_TREATMENT
from .fits import fit_logistic_auto, fit_ols, logistic, penalised_columns
from .splines import spline_basis

_dowhy_lock = threading.Lock()
_estimator_cls = None


def preload() -> None:
    """Import DoWhy (takes seconds) with matplotlib's cache in a writable place and DoWhy's
    logging silenced. Safe to call from any thread, any number of times."""
    scenario_estimator_class()


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


def coefficient_draws(beta: np.ndarray, cov: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """`draws` x p coefficient draws from N(beta, cov), seeded: beta + z L' with z standard
    normal (np.random.default_rng(seed)) and L the Cholesky factor of cov.

    The Cholesky factor is unique and continuous in cov, so a covariance that differs in its
    last bits (another BLAS, another summation order) gives draws that differ in their last
    bits. An eigendecomposition (numpy's multivariate_normal, "eigh" or "svd") is not: each
    eigenvector's sign is arbitrary and may flip, giving other draws and another interval. A
    covariance that is not numerically positive definite falls back to the eigendecomposition,
    each eigenvector's largest entry made positive."""
    p = len(beta)
    cov = (cov + cov.T) / 2
    z = np.random.default_rng(seed).standard_normal((draws, p))
    try:
        root = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        s, u = np.linalg.eigh(cov)
        u = u * np.where(u[np.abs(u).argmax(axis=0), np.arange(p)] < 0, -1.0, 1.0)
        root = u * np.sqrt(np.clip(s, 0, None))
    return beta + z @ root.T


def scenario_estimator_class():
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
                w = sorted(estimand.get_adjustment_set())
                t = estimand.treatment_variable[0]
                return (f"b: {estimand.outcome_variable[0]} ~ {link}^-1(s({t})"
                        + "".join(f" + s({x})" for x in w) + ")")

            def _columns(self):
                # sorted: DoWhy's adjustment set is a Python set of str, whose order changes
                # with the process's string hash seed, and so would the features' order
                return (self._target_estimand.treatment_variable[0],
                        sorted(self._target_estimand.get_adjustment_set()))

            def _scales(self, data):
                """Feature maps per column, fitted on `data`; maps already fitted (this
                estimator's, inherited by the refuters' deep copies) are kept: a refit on a
                subset or with a placebo column uses the same fixed features for the others."""
                t, w = self._columns()
                sc = dict(getattr(self, "_sc", None) or {})
                for c in [t] + w:
                    if c not in sc:
                        sc[c] = spline_basis(data[c].to_numpy(dtype=float),
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
                # penalised if a penalty is needed: every column but each block's linear one
                self._penalised = penalised_columns([c.shape[1] for c in cols])
                return np.hstack(cols)

            def _build_model(self, data):
                self._sc = self._scales(data)
                X = self._build_features(data)
                y = data[self._target_estimand.outcome_variable[0]].to_numpy(dtype=float)
                if not self.binary:
                    return X, fit_ols(X, y)
                prev = self.model   # refuters deep-copy a fitted estimator: warm start from it
                start = (prev.params if prev is not None and len(prev.params) == X.shape[1]
                         else None)
                ridge = prev.ridge if prev is not None else None
                return X, fit_logistic_auto(X, y, start=start, ridge=ridge,
                                            penalised=self._penalised)

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
                Xo = self._build_features(d)
                Xv = self._build_features(d, treatment_values=treatment_value)
                if not self.binary:
                    return (Xv - Xo).mean(axis=0) @ betas.T   # linear: mean of differences
                # the change of the error probability of cases like the selected ones,
                # p(v, W_i) - p(t_i, W_i): not the counterfactual given their observed outcome.
                # The default selection is the badcases (y = 1), which under the monotone model
                # can only lose their failure: that estimate is <= 0 for a fitted slope of either
                # sign (the selected cases sit on both sides of v), so its interval never held 0
                # and a placebo gave the same "effect" (issue 35)
                out = np.empty(len(betas))
                for i in range(0, len(betas), 32):             # blocks of draws: n x 32
                    bt = betas[i:i + 32].T
                    out[i:i + 32] = (logistic(Xv @ bt) - logistic(Xo @ bt)).mean(axis=0)
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
                beta = np.asarray(self.model.params, dtype=float)
                b = coefficient_draws(beta, np.asarray(self.model.cov_params(), dtype=float),
                                      draws, seed)
                e = self.effects(data, treatment_value, b)
                a = (1 - level) / 2
                return float(np.quantile(e, a)), float(np.quantile(e, 1 - a))

        _estimator_cls = ScenarioRegressionEstimator
        return _estimator_cls
