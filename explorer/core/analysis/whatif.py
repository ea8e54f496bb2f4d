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
   logistic (statsmodels GLM, Binomial) for a 0/1 outcome, OLS otherwise; features: t, t^2
   (standardised), each adjustment variable and, for non-binary ones, its square.
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
"""
from __future__ import annotations

import logging
import math
import os
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..errors import NoData, TraceExplorerError
from .causal_graph import CausalGraph, default_graph_text, parse_graph

#: Simulations per refuter (DoWhy's default is 100; 10 keeps estimate + 3 refuters on 50k rows
#: under 3 s on one core (bench/whatif.py) and is enough for a mean of the refuted estimate).
N_SIMULATIONS = 10
#: Coefficient draws of the parametric bootstrap interval.
N_DRAWS = 400
CONFIDENCE = 0.95
#: Fewest usable rows an estimate is attempted on.
MIN_ROWS = 30
#: Share of rows each data-subset refutation keeps.
SUBSET_FRACTION = 0.8

#: Default SLA thresholds of `sla_met` and whatif_scale: TTFT <= 2 s, TPOT <= 100 ms/token
#: (the interactive-chat targets used in vLLM's `--goodput ttft:2000 tpot:100` examples).
DEFAULT_SLA = {"ttft_ms": 2000.0, "tpot_ms": 100.0}

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
        import statsmodels.api as sm
        from dowhy.causal_estimator import CausalEstimate

        class ScenarioRegressionEstimator(RegressionEstimator):
            """Backdoor regression estimator of the effect of moving each target unit from its
            observed treatment to `treatment_value` (control_value "observed").

            Outcome model: logistic GLM (binary outcome) or OLS on t, t^2, W, W^2 (see module
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
                return (f"b: {estimand.outcome_variable[0]} ~ {link}^-1({t} + {t}^2"
                        + "".join(f" + {x}" for x in w) + ")")

            def _columns(self):
                return (self._target_estimand.treatment_variable[0],
                        list(self._target_estimand.get_adjustment_set()))

            def _scales(self, data):
                t, w = self._columns()
                sc = {}
                for c in [t] + w:
                    x = data[c].to_numpy(dtype=float)
                    mu, sd = float(np.mean(x)), float(np.std(x))
                    sc[c] = (mu, sd if sd > 0 else 1.0, len(np.unique(x[:50_000])) > 2)
                return sc

            def _build_features(self, data_df, treatment_values=None):
                t, w = self._columns()
                if getattr(self, "_sc", None) is None or any(c not in self._sc for c in [t] + w):
                    self._sc = self._scales(data_df)
                tv = (data_df[t].to_numpy(dtype=float) if treatment_values is None
                      else np.broadcast_to(np.asarray(treatment_values, dtype=float),
                                           (len(data_df),)))
                mu, sd, _ = self._sc[t]
                z = (tv - mu) / sd
                cols = [np.ones(len(data_df)), z, z * z]
                for c in w:
                    mu, sd, nonbin = self._sc[c]
                    zc = (data_df[c].to_numpy(dtype=float) - mu) / sd
                    cols.append(zc)
                    if nonbin:
                        cols.append(zc * zc)
                return np.column_stack(cols)

            def _build_model(self, data):
                self._sc = self._scales(data)
                X = self._build_features(data)
                y = data[self._target_estimand.outcome_variable[0]].to_numpy(dtype=float)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if self.binary:
                        model = sm.GLM(y, X, family=sm.families.Binomial()).fit()
                    else:
                        model = sm.OLS(y, X).fit()
                return X, model

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
                eo, ev = Xo @ betas.T, Xv @ betas.T          # n x k
                if not self.binary:
                    return (ev - eo).mean(axis=0)
                po = 1.0 / (1.0 + np.exp(-np.clip(eo, -35, 35)))
                pv = 1.0 / (1.0 + np.exp(-np.clip(ev, -35, 35)))
                yc = y[:, None]
                down = pv <= po
                cf = np.where(down, yc * pv / np.maximum(po, 1e-12),
                              yc + (1 - yc) * (pv - po) / np.maximum(1 - po, 1e-12))
                return (cf - yc).mean(axis=0)

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

def _is_binary(s: pd.Series) -> bool:
    v = pd.unique(s.dropna())
    return len(v) <= 2 and set(np.asarray(v, dtype=float).tolist()) <= {0.0, 1.0}


def add_sla_met(frame: pd.DataFrame, thresholds: dict[str, float] | None = None) -> pd.DataFrame:
    """Copy of frame with `sla_met` = 1 when every threshold metric is at or below its
    threshold (ms), 0 when one is above, NULL when one is missing. Default: DEFAULT_SLA,
    limited to the metrics the frame has. Raises WhatIfError when it has none of them."""
    th = {k: v for k, v in (thresholds or DEFAULT_SLA).items() if k in frame.columns}
    if not th:
        raise WhatIfError("SLA attainment needs one of " + ", ".join(thresholds or DEFAULT_SLA)
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


def _why_unidentifiable(graph: CausalGraph, treatment: str, outcome: str,
                        observed: set[str]) -> str:
    g = graph.to_networkx()
    import networkx as nx
    anc_t = nx.ancestors(g, treatment)
    anc_y = nx.ancestors(g, outcome)
    culprits = sorted(n for n in (anc_t & anc_y) if n not in observed)
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

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model0 = CausalModel(data=data.iloc[:0], treatment=treatment, outcome=outcome, graph=g)
        estimand = model0.identify_effect(proceed_when_unidentifiable=True)
    bd = estimand.get_backdoor_variables()
    if estimand.estimands.get("backdoor") is None or bd is None:
        raise WhatIfError(_why_unidentifiable(graph, treatment, outcome, set(observed_cols)))
    adjust = [str(c) for c in bd]
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
    model_txt = ("logistic regression (statsmodels GLM, Binomial)" if binary
                 else "linear regression (OLS)")
    method = (f"DoWhy backdoor adjustment; {model_txt} of {outcome} on {treatment}, "
              f"{treatment}^2 and the adjustment set (with squares); interval: parametric "
              f"bootstrap, {N_DRAWS} draws, seed {seed}")
    assumptions = [
        f"The causal graph is right: every common cause of {treatment} and {outcome} is drawn, "
        f"and the adjustment set ({', '.join(adjust) or 'empty'}) blocks every backdoor path.",
        f"No other case's {treatment} affects this case (no interference); with a shared KV "
        f"cache this holds only approximately: the scenario changes these cases alone.",
        f"The outcome model fits: {model_txt}, quadratic in {treatment}.",
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
