"""run_whatif: the scenario "set kv_cache_hit_rate to 0.67 for these cases, what happens to the
error rate?", end to end (checks, identification, DoWhy estimate, interval, refuters, the
result's method / assumptions / warnings). The method is the package doc's
(whatif/__init__.py).

frame: one row per case (analysis.cohort_frame); result: WhatIfResult, whose to_dict() is the
report's `whatif` section (DESIGN.md). Effects are in the outcome's units (a share 0..1 for a
0/1 outcome such as `badcase`), the scenario value in the treatment's units.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, TypedDict

import numpy as np
import pandas as pd

from ...errors import NoData
from ..causal_graph import default_graph_text, parse_graph
from .constants import CONFIDENCE, MIN_ROWS, N_DRAWS, N_SIMULATIONS, REFUTE_ROWS
from .estimator import scenario_estimator_class
from ...errors import Cancelled
from .exceptions import WhatIfError
from .fits import one_blas_thread, ridge_warning
from .identify import backdoor_set
from .refute import REFUTERS, Refutation, run_refuter, stratified_sample, subset_spread
from .sla_met import add_sla_met
from explorer.core.i18n import _, ngettext
from explorer.core.names import label

class RefutationDict(TypedDict):
    """Refutation.to_dict(): one refuter's outcome (new_effect in the outcome's units)."""
    name: str
    label: str
    new_effect: float | None
    p_value: float | None
    verdict: str
    why: str


class RefuteSampleDict(TypedDict):
    """The rows the refuters ran on when there were more than REFUTE_ROWS: n of `of`, the
    estimate and interval there, and `error`, that estimate's expected distance (one standard
    deviation) from the full-data estimate (outcome units)."""
    n: int
    of: int
    estimate: float
    ci_low: float
    ci_high: float
    error: float


class ScenarioDict(TypedDict):
    """The `scenario` of a `whatif` section: {treatment: value} set, the predicted outcome of
    the selected cases and its interval."""
    set: dict[str, float]
    predicted_outcome: float
    ci_low: float
    ci_high: float


class WhatIfSection(TypedDict):
    """WhatIfResult.to_dict(): the report's `whatif` section (DESIGN.md) as the What-if panel,
    its painters and the report read it. A section that could not be computed is a status
    dict ({"status", "reason"}) instead."""
    treatment: str
    outcome: str
    common_causes: list[str]
    estimate: float
    ci_low: float
    ci_high: float
    refutations: list[RefutationDict]
    refute_sample: RefuteSampleDict | None
    scenario: ScenarioDict
    observed_outcome: float
    observed_treatment_mean: float | None
    naive_difference: float | None
    outcome_kind: str
    assumptions: list[str]
    n: int
    n_selected: int
    n_dropped: int
    unobserved: list[str]
    method: str
    warnings: list[str]


#: Progress steps of run_whatif: checks, identification, estimate, three refuters.
_PROGRESS_STEPS = 5


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
    refute_sample: RefuteSampleDict | None = None   # None: the refuters used every row

    def to_dict(self) -> WhatIfSection:
        return {
            "treatment": self.treatment,
            "outcome": self.outcome,
            "common_causes": list(self.common_causes),
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "refutations": [r.to_dict() for r in self.refutations],
            "refute_sample": None if self.refute_sample is None else dict(self.refute_sample),
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


def _is_binary(s: pd.Series) -> bool:
    v = pd.unique(s.dropna())
    return len(v) <= 2 and set(np.asarray(v, dtype=float).tolist()) <= {0.0, 1.0}


def _num(x: float) -> str:
    """3 significant digits, signed; an exact zero as plain "0"."""
    return "0" if x == 0 else f"{x:+.3g}"


def _canonical_order(frame: pd.DataFrame, sel: pd.Series) -> tuple[pd.DataFrame, pd.Series]:
    """frame and its selection mask in case_id order (a stable sort; unchanged without a
    case_id column): sums, the spline knots' row sample and the refuters' seeded permutations
    and subsets then depend on the frame's content, not on the order its rows came in."""
    if "case_id" not in frame.columns or len(frame) < 2:
        return frame, sel
    order = np.argsort(frame["case_id"].astype(str).to_numpy(), kind="stable")
    if (order == np.arange(len(order))).all():
        return frame, sel
    return frame.iloc[order], sel.iloc[order]


def _check(cancelled, progress, step):
    if cancelled is not None and cancelled():
        raise Cancelled(_("what-if cancelled"))
    if progress is not None:
        progress(step, _PROGRESS_STEPS)


#: Fewest cases of each outcome (0 and 1) a binary outcome model is fitted on: the
#: conclusion's minimum support (evidence.MIN_SUPPORT), and below it an 80% subset of the
#: data-subset refuter often holds no case of the rarer outcome at all.
MIN_EVENTS = 10


def run_whatif(frame: pd.DataFrame, treatment: str = "kv_cache_hit_rate",
               outcome: str = "badcase", set_value: float | None = None,
               graph_text: str | None = None, selected: pd.Series | None = None,
               refute: bool = True, seed: int = 0, progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None, *,
               thresholds: dict[str, float] | None = None,
               num_simulations: int = N_SIMULATIONS,
               refute_rows: int = REFUTE_ROWS) -> WhatIfResult:
    """Estimate what the outcome of the selected cases would be with the treatment set to
    `set_value` (see the package doc, whatif/__init__.py, for the method).

    frame: one row per case (analysis.cohort_frame); treatment/outcome: column names (outcome
    `sla_met` is derived from `thresholds` when absent). set_value: scenario value in the
    treatment's units (default: the control group's mean treatment, or the median of all rows
    without a `grp` column). graph_text: DOT/GML (default resources/causal_graph.dot).
    selected: bool mask aligned with frame (default grp == 'bad', else every row). progress
    (done, total) and cancelled() are optional callbacks. refute_rows: most rows the
    refuters refit on (more: a stratified sample of that many, see _refuted).
    Returns WhatIfResult. Raises InputError (bad graph, with line), WhatIfError (treatment or
    outcome unknown or not in the graph, effect not identifiable), NoData (too few usable rows,
    constant treatment, no selected row), Cancelled.
    """
    with one_blas_thread():
        return _run_whatif(frame, treatment, outcome, set_value, graph_text, selected, refute,
                           seed, progress, cancelled, thresholds, num_simulations, refute_rows)


def _run_whatif(frame, treatment, outcome, set_value, graph_text, selected, refute, seed,
                progress, cancelled, thresholds, num_simulations,
                refute_rows=REFUTE_ROWS) -> WhatIfResult:
    _check(cancelled, progress, 0)
    frame, graph, g = _checked_graph(frame, graph_text, treatment, outcome, thresholds)
    warn: list[str] = []
    tn, on = label(treatment, False), label(outcome, False)  # the names the sentences use

    observed_cols = [n for n in graph.nodes if n in frame.columns and n not in graph.latent]
    unobserved = tuple(graph.unobserved(frame.columns))
    frame, sel = _canonical_order(frame, _selected_rows(frame, selected))
    data = frame[observed_cols].apply(pd.to_numeric, errors="coerce").astype(float)
    set_value = _scenario_value(frame, data, sel, treatment, set_value, tn, warn)
    _check_path(g, treatment, outcome, tn, on)

    # ---- identification (DoWhy) ----
    _check(cancelled, progress, 1)
    scenario_estimator_class()   # imports DoWhy (identification below uses it)

    # DoWhy returns the backdoor set in the order of a Python set of str, which changes with
    # the per-process string hash seed (PYTHONHASHSEED): sorted, the design matrix's columns,
    # hence every digit of the fit and of the seeded draws, are the same in every process.
    adjust = sorted(set(backdoor_set(graph, g, data, treatment, outcome, observed_cols))
                    | set(_workload_adjust(g, data, treatment, outcome)))
    d, n_dropped = _usable_rows(data, sel, [treatment, outcome] + adjust, warn)
    binary = _binary_outcome(d, outcome, on)
    lo_obs, hi_obs = _observed_range(d, treatment, set_value, tn, warn)

    # ---- estimate (DoWhy) ----
    _check(cancelled, progress, 2)
    model, estimand, estimate, estimator = _estimate(d, g, treatment, outcome, set_value, binary,
                                                     adjust)
    est = float(estimate.value)
    lo, hi = _interval(estimator, d, set_value, est, seed, warn)
    ds = d[d["__selected"] == 1]
    observed = float(ds[outcome].mean())
    naive = _naive_difference(d, ds, treatment, outcome, set_value)
    refs: list[Refutation] = []
    sample = None
    if refute and len(d) > refute_rows:
        refs, sample = _refuted(d, g, (treatment, outcome, set_value, binary, adjust), estimator,
                                est, (lo, hi), refute_rows, num_simulations, seed, cancelled,
                                progress, warn)
    elif refute:
        refs = _refutations(model, estimand, estimate, treatment, est, (lo, hi), num_simulations,
                            seed, cancelled, progress)
    _check(cancelled, progress, _PROGRESS_STEPS)

    pred, plo, phi = _predicted(observed, est, lo, hi, binary)
    ridge = getattr(estimator.model, "ridge", 0.0)
    warn += _fit_notes(estimator.model, ridge, binary, lo, hi, observed, tn, on)
    model_txt, method = _method_text(binary, ridge, tn, on, seed)
    assumptions = _assumptions(adjust, tn, on, model_txt, set_value, lo_obs, hi_obs, binary)
    return WhatIfResult(
        treatment=treatment, outcome=outcome, set_value=set_value,
        common_causes=tuple(adjust), estimate=est, ci_low=lo, ci_high=hi,
        observed_outcome=observed, predicted_outcome=float(pred),
        predicted_ci_low=float(plo), predicted_ci_high=float(phi),
        refutations=tuple(refs), assumptions=tuple(assumptions), n=int(len(d)),
        n_selected=int(d["__selected"].sum()), n_dropped=n_dropped, method=method,
        outcome_kind="binary" if binary else "continuous",
        unobserved=unobserved, observed_treatment_mean=float(ds[treatment].mean()),
        naive_difference=naive, warnings=tuple(warn), refute_sample=sample)


def _checked_graph(frame: pd.DataFrame, graph_text: str | None, treatment: str, outcome: str,
                   thresholds: dict[str, float] | None):
    """(frame, graph, its networkx digraph): the graph parsed (default resources/
    causal_graph.dot) and the roles checked against it; frame gains `sla_met` (from
    thresholds) when that is the outcome and it is absent."""
    if outcome == "sla_met" and "sla_met" not in frame.columns:
        frame = add_sla_met(frame, thresholds)
    graph = parse_graph(graph_text if graph_text is not None else default_graph_text(),
                        known=frame.columns)
    _check_roles(graph, frame, treatment, outcome)
    return frame, graph, graph.to_networkx()


def _scenario_value(frame: pd.DataFrame, data: pd.DataFrame, sel: pd.Series, treatment: str,
                    set_value: float | None, tn: str, warn: list[str]) -> float:
    """set_value as a float; when None the default (_default_set_value), and said in `warn`."""
    if set_value is None:
        set_value = _default_set_value(frame, data, sel, treatment)
        warn.append(_("No scenario value given: {treatment} is set to the control group's mean, "
                    "{set_value:.3g}.").format(treatment=tn, set_value=set_value))
    return float(set_value)


def _check_path(g, treatment: str, outcome: str, tn: str, on: str) -> None:
    """WhatIfError when the graph has no directed path from treatment to outcome."""
    import networkx as nx
    if not nx.has_path(g, treatment, outcome):
        raise WhatIfError(_("The graph has no directed path from {treatment} to {outcome}: by its "
                          "assumptions the effect is zero. Add an edge if you believe otherwise.").format(treatment=tn, outcome=on))


def _binary_outcome(d: pd.DataFrame, outcome: str, on: str) -> bool:
    """Whether the outcome is 0/1; if so d's outcome column is made int and checked to hold
    enough cases of each (_enough_events)."""
    binary = _is_binary(d[outcome])
    if binary:
        d[outcome] = d[outcome].astype(int)
        _enough_events(d[outcome], on)
    return binary


def _observed_range(d: pd.DataFrame, treatment: str, set_value: float, tn: str,
                    warn: list[str]) -> tuple[float, float]:
    """The treatment's observed (min, max) in d; a set_value outside it said in `warn`."""
    lo_obs, hi_obs = float(d[treatment].min()), float(d[treatment].max())
    if not lo_obs <= set_value <= hi_obs:
        warn.append(_("{treatment} = {set_value:.3g} lies outside the observed range "
                    "[{lo_obs:.3g}, {hi_obs:.3g}]: the prediction is an extrapolation.").format(treatment=tn, set_value=set_value, lo_obs=lo_obs, hi_obs=hi_obs))
    return lo_obs, hi_obs


def _interval(estimator, d: pd.DataFrame, set_value: float, est: float, seed: int,
              warn: list[str]) -> tuple[float, float]:
    """The estimate's bootstrap interval (N_DRAWS, CONFIDENCE), widened to hold `est`."""
    lo, hi = estimator.interval(d, set_value, N_DRAWS, CONFIDENCE, seed)
    if not lo <= est <= hi:
        # under (quasi-)separation the likelihood is flat along some direction and the draws'
        # percentiles can miss the point estimate: widened to hold it, and said
        warn.append(_("The estimate ({est}) lay outside its bootstrap interval ({lo} to "
                      "{hi}), a sign that the data barely pin the model down (separation); the "
                      "interval is widened to include it. Treat both with care.").format(
                          est=_num(est), lo=_num(lo), hi=_num(hi)))
        lo, hi = min(lo, est), max(hi, est)
    return lo, hi


def _naive_difference(d: pd.DataFrame, ds: pd.DataFrame, treatment: str, outcome: str,
                      set_value: float) -> float:
    """The unadjusted comparison: the slope of outcome on treatment alone (all of d) times
    the mean shift of the selection ds."""
    tt, yy = d[treatment].to_numpy(), d[outcome].to_numpy(dtype=float)
    slope = float(np.polyfit(tt, yy, 1)[0])
    return slope * float(set_value - ds[treatment].mean())


def _refutations(model, estimand, estimate, treatment: str, est: float,
                 ci: tuple[float, float], num_simulations: int, seed: int, cancelled,
                 progress) -> list[Refutation]:
    """The REFUTERS run in turn (progress steps 3, 4, ...), each against the interval ci."""
    lo, hi = ci
    half = (hi - lo) / 2
    refs = []
    for step, name in enumerate(REFUTERS, start=3):
        _check(cancelled, progress, step)
        refs.append(run_refuter(model, estimand, estimate, name, treatment, est, half,
                                num_simulations, seed, ci=(lo, hi)))
    return refs


def _refuted(d: pd.DataFrame, g, spec, fitted, est: float, ci: tuple[float, float],
             rows: int, num_simulations: int, seed: int, cancelled, progress,
             warn: list[str]) -> tuple[list[Refutation], RefuteSampleDict]:
    """The refuters on a stratified random sample of `rows` of d's rows (stratified_sample:
    by outcome for a 0/1 one, and by selection), refitted there with the full fit's features
    and penalty (`fitted`, the full-data estimator) and judged against the sample's own
    estimate and interval. spec: (treatment, outcome, set_value, binary, adjust). Returns
    (the refutations, the refute_sample dict); the sample and its error said in `warn`.
    Their error: a random share f of the rows gives an estimate whose difference from the
    full-data one has standard deviation subset_spread(half, f) (SE sqrt((1 - f) / f));
    stratifying makes it no larger."""
    treatment, outcome, set_value, binary, adjust = spec
    strata = d["__selected"].to_numpy() * 2 + (d[outcome].to_numpy() if binary else 0)
    ds = d.iloc[stratified_sample(strata, rows, seed, floor=MIN_EVENTS)]
    model, estimand, estimate, estimator = _estimate(ds, g, treatment, outcome, set_value,
                                                     binary, adjust, like=fitted)
    est_s = float(estimate.value)
    lo_s, hi_s = estimator.interval(ds, set_value, N_DRAWS, CONFIDENCE, seed)
    lo_s, hi_s = min(lo_s, est_s), max(hi_s, est_s)
    err = subset_spread((ci[1] - ci[0]) / 2, len(ds) / len(d))
    warn.append(_("The refuters ran on a stratified random sample of {n} of the {of} rows (by "
                  "outcome and selection, seed {seed}; each refits the model {sims} times): "
                  "there the estimate is {est_s} ({lo} to {hi}) against {est} on every row, "
                  "and a sample's estimate lies about {err:.3g} (one standard deviation) from "
                  "the full-data one. Their effects are compared with the sample's estimate "
                  "and interval.").format(n=len(ds), of=len(d), seed=seed, sims=num_simulations,
                                          est_s=_num(est_s), lo=_num(lo_s), hi=_num(hi_s),
                                          est=_num(est), err=err))
    refs = _refutations(model, estimand, estimate, treatment, est_s, (lo_s, hi_s),
                        num_simulations, seed, cancelled, progress)
    return refs, {"n": int(len(ds)), "of": int(len(d)), "estimate": est_s,
                  "ci_low": float(lo_s), "ci_high": float(hi_s), "error": float(err)}


def _predicted(observed: float, est: float, lo: float, hi: float,
               binary: bool) -> tuple[float, float, float]:
    """The selection's predicted outcome and its interval: observed + effect (a 0/1
    outcome's clipped to 0..1)."""
    pred, plo, phi = observed + est, observed + lo, observed + hi
    if binary:
        pred, plo, phi = (min(1.0, max(0.0, x)) for x in (pred, plo, phi))
    return pred, plo, phi


def _fit_notes(fit, ridge: float, binary: bool, lo: float, hi: float, observed: float,
               tn: str, on: str) -> list[str]:
    """The warnings about the fit: a ridge penalty used, an interval holding no change, a
    logistic fit that did not converge."""
    notes = []
    if binary and ridge:
        notes.append(ridge_warning(ridge, on))
    if lo <= 0 <= hi:
        notes.append(_no_change_note(lo, hi, binary, observed, tn, on))
    if binary and not getattr(fit, "converged", True):
        notes.append(_("The logistic fit did not converge; treat the interval with care."))
    return notes


#: What the cases were asked: adjusted for by default whenever it is a column and not a
#: descendant of the treatment (issue 35: the badcases are often the long prompts, which also
#: have lower hit rates; a graph that omits the edge would leave that path open).
WORKLOAD = ("prompt_tokens", "completion_tokens")


def _workload_adjust(g, data: pd.DataFrame, treatment: str, outcome: str) -> list[str]:
    """The workload columns (WORKLOAD) that are nodes of the graph, recorded in the data and not
    descendants of the treatment (adjusting for a mediator or collider would bias the effect)."""
    import networkx as nx
    if treatment not in g:
        return []
    below = nx.descendants(g, treatment)
    return [c for c in WORKLOAD if c in g and c in data.columns and c not in below
            and c not in (treatment, outcome) and data[c].notna().any()]


def _estimate(d: pd.DataFrame, g, treatment: str, outcome: str, set_value: float,
              binary: bool, adjust=None, like=None):
    """DoWhy's backdoor estimate of moving the selected rows of `d` to set_value: (model,
    estimand, estimate, estimator), the estimator the scenario regression
    (scenario_estimator_class). like: a fitted estimator whose feature maps and penalty (and
    coefficients, as the start) the fit reuses, as the refuters' refits do."""
    from dowhy import CausalModel
    from dowhy.causal_estimator import estimate_effect as dowhy_estimate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CausalModel(data=d, treatment=treatment, outcome=outcome, graph=g)
        estimand = model.identify_effect(proceed_when_unidentifiable=True)
        estimand.set_identifier_method("backdoor")
        if adjust is not None:   # the backdoor set plus the workload (_workload_adjust)
            estimand.set_backdoor_variables(list(adjust))
        estimator = scenario_estimator_class()(estimand, binary=binary, selected_col="__selected")
        if like is not None:
            estimator._sc, estimator.model = dict(like._sc), like.model
        estimate = dowhy_estimate(d, treatment, outcome, "backdoor", estimator,
                                  control_value="observed", treatment_value=set_value,
                                  target_units="ate", method_params={})
    return model, estimand, estimate, estimator


def _method_text(binary: bool, ridge: float, tn: str, on: str, seed: int) -> tuple[str, str]:
    """(the outcome model in words, the whole method in words) for the result."""
    model_txt = ((_("logistic regression (maximum likelihood with a cross-validated curvature "
                    "penalty, {ridge:g})").format(ridge=ridge) if ridge
                  else _("logistic regression (maximum likelihood)")) if binary
                 else _("linear regression (OLS)"))
    method = _("DoWhy backdoor adjustment; {model_txt} of {outcome} on a cubic spline of "
               "{treatment} and, per adjustment variable, its value and a spline of its rank; "
               "interval: parametric bootstrap, {N_DRAWS} draws, seed {seed}").format(
                   model_txt=model_txt, outcome=on, treatment=tn, N_DRAWS=N_DRAWS,
                   seed=seed)
    return model_txt, method


def _check_roles(graph, frame: pd.DataFrame, treatment: str, outcome: str) -> None:
    """WhatIfError unless treatment and outcome differ and each is an observed node of the
    graph and a column of the frame."""
    for role, name in (("treatment", treatment), ("outcome", outcome)):
        if name not in graph.nodes:
            raise WhatIfError(_("The {role} '{name}' is not a node of the causal graph.").format(role=role, name=name))
        if name not in frame.columns:
            raise WhatIfError(_("The {role} '{name}' is not in the data.").format(role=role, name=name))
        if name in graph.latent:
            raise WhatIfError(_("The {role} '{name}' is marked latent in the graph.").format(role=role, name=name))
    if treatment == outcome:
        raise WhatIfError(_("Treatment and outcome must differ."))


def _selected_rows(frame: pd.DataFrame, selected) -> pd.Series:
    """The scenario's cases as a boolean Series: `selected`, else the badcases (grp "bad"),
    else every case."""
    if selected is not None:
        return pd.Series(selected, index=frame.index).fillna(False).astype(bool)
    sel = (frame["grp"] == "bad") if "grp" in frame.columns else pd.Series(True, frame.index)
    return sel if sel.any() else pd.Series(True, frame.index)


def _default_set_value(frame: pd.DataFrame, data: pd.DataFrame, sel: pd.Series,
                       treatment: str) -> float:
    """The scenario value when none is given: the control group's mean of the treatment (the
    unselected cases' without groups), else the median of every case's. NoData without any."""
    ctl = frame["grp"] == "control" if "grp" in frame.columns else ~sel
    base = data.loc[ctl, treatment].dropna() if ctl.any() else data[treatment].dropna()
    if base.empty:
        base = data[treatment].dropna()
    if base.empty:
        raise NoData(_("No case has a value of {treatment}.").format(treatment=label(treatment, False)))
    return float(base.mean() if ctl.any() else base.median())


def _usable_rows(data: pd.DataFrame, sel: pd.Series, used: list[str], warn: list[str]):
    """(the rows with every `used` column recorded, their column __selected; rows dropped),
    the drop said in `warn`. NoData with fewer than MIN_ROWS rows, a constant treatment
    (used[0]) or no selected row left."""
    treatment = used[0]
    keep = data[used].notna().all(axis=1)
    n_dropped = int((~keep).sum())
    if n_dropped:
        warn.append(_("{n_dropped} of {n_data} rows dropped: missing ").format(n_dropped=n_dropped, n_data=len(data))
                    + ", ".join(label(c, False) for c in used if data[c].isna().any()) + ".")
    d = data.loc[keep, used].copy()
    d["__selected"] = sel[keep].astype(int).to_numpy()
    if len(d) < MIN_ROWS:
        raise NoData(ngettext("Only {n} case has {used} all recorded; the what-if needs at "
                              "least {min_rows}.",
                              "Only {n} cases have {used} all recorded; the what-if needs at "
                              "least {min_rows}.", len(d)).format(
                                  n=len(d), used=", ".join(label(c, False) for c in used), min_rows=MIN_ROWS))
    if d[treatment].nunique() < 2:
        raise NoData(_("{treatment} takes a single value in the usable cases; its effect cannot "
                     "be estimated.").format(treatment=label(treatment, False)))
    if int(d["__selected"].sum()) == 0:
        raise NoData(_("None of the selected cases has every variable the what-if needs."))
    return d, n_dropped


def _enough_events(y: pd.Series, on: str) -> None:
    """NoData unless a 0/1 outcome (named `on`) has MIN_EVENTS cases of each value."""
    events = int(y.sum())
    few = min(events, len(y) - events)
    if few < MIN_EVENTS:
        which = "with" if events == few else "without"
        raise NoData(_("Only {few} usable case{x} {which} {outcome} = 1: "
                     "a model of {outcome} needs at least {MIN_EVENTS} of each outcome "
                     "(with fewer, its fit and its refuters' refits on subsets are "
                     "undefined).").format(few=few, x='s' if few != 1 else '', which=which, outcome=on, MIN_EVENTS=MIN_EVENTS))


def _no_change_note(lo: float, hi: float, binary: bool, observed: float, tn: str, on: str) -> str:
    """Why an effect interval [lo, hi] that holds 0 cannot tell the scenario from no change."""
    note = (_("The effect's {CONFIDENCE:.0%} interval ({lo} to {hi}) includes "
            "no change: the data cannot tell this scenario from leaving {treatment} as it is.").format(CONFIDENCE=CONFIDENCE, lo=_num(lo), hi=_num(hi), treatment=tn))
    return note


def _assumptions(adjust, tn, on, model_txt, set_value, lo_obs, hi_obs, binary) -> list[str]:
    """What the estimate assumes, in the result's words."""
    assumptions = [
        _("The causal graph is right: every common cause of {treatment} and {outcome} is drawn, "
        "and the adjustment set ({x}) blocks every backdoor path.").format(treatment=tn, outcome=on, x=', '.join(label(c, False) for c in adjust) or _('empty')),
        _("No other case's {treatment} affects this case (no interference); with a shared KV "
        "cache this holds only approximately: the scenario changes these cases alone.").format(treatment=tn),
        _("The outcome model fits: {model_txt}, smooth (spline) in {treatment} and in "
        "each adjustment variable, without interactions between them.").format(model_txt=model_txt, treatment=tn),
        _("Positivity: cases like the selected ones are seen with {treatment} near "
        "{set_value:.3g} (observed range {lo_obs:.3g} to {hi_obs:.3g}).").format(treatment=tn, set_value=set_value, lo_obs=lo_obs, hi_obs=hi_obs),
        _("Rows with missing values are missing at random."),
    ]
    if binary:
        assumptions.append(
            _("Monotone effect: each case responds to {treatment} in the same direction (a "
            "latent-threshold model), so a failed case fails under the scenario with "
            "probability p(set) / p(observed).").format(treatment=tn))
    return assumptions
