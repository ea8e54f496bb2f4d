"""Per-case counterfactual outcomes for several treatments moved at once, each case to its own
new value: the what-if's outcome model fed with values a replay predicts ("with 40,000 KV
blocks this request would have hit 62 % of its prompt and not been preempted").

Same outcome model family as run_whatif (package doc, step 2): logistic (fits.fit_logistic_auto,
so it follows whatever penalty rule the what-if uses) or OLS on a cubic spline of each
treatment and, per adjustment variable, its value and a spline of its rank. The adjustment set
is the observed parents of the treatments in the causal graph (Pearl's parent adjustment, a
valid backdoor set when every parent that also reaches the outcome other than through the
treatments is observed; otherwise WhatIfError names the culprit). Counterfactuals: the
latent-threshold model of a binary outcome (a failed case keeps failing with probability
p_new / p_obs when p_new <= p_obs, a correct one fails with probability (p_new - p_obs) /
(1 - p_obs) when p_new > p_obs), additive noise for a continuous one. Interval: seeded
coefficient draws (estimator.coefficient_draws) and, for a binary outcome, one Bernoulli draw
of every case's counterfactual outcome per coefficient draw, so the interval of the count
covers chance as well as the model's uncertainty.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from ...errors import NoData
from ..causal_graph import default_graph_text, parse_graph
from .constants import CONFIDENCE, MIN_ROWS, N_DRAWS, N_KNOTS_ADJUST, N_KNOTS_TREATMENT
from .estimator import coefficient_draws
from .exceptions import WhatIfError
from .fits import (fit_logistic_auto, fit_ols, logistic, monotone_counterfactual, one_blas_thread,
                   penalised_columns, ridge_warning)
from .splines import spline_basis
from explorer.core.names import label
from explorer.core.i18n import _, ngettext


@dataclass(frozen=True)
class JointCounterfactual:
    """observed: sum of the outcome over the target rows; predicted: expected sum under the new
    values; ci_low / ci_high: CONFIDENCE interval of the sum (model draws x chance); per_case:
    DataFrame(index = target rows) with p_obs, p_new, y, y_new_expected; adjustment: the
    adjustment set; n_fit: rows the model was fitted on; warnings."""
    outcome: str
    treatments: tuple[str, ...]
    adjustment: tuple[str, ...]
    observed: float
    predicted: float
    ci_low: float
    ci_high: float
    n_fit: int
    n_target: int
    per_case: pd.DataFrame
    model: str
    warnings: tuple[str, ...] = field(default_factory=tuple)


def parent_adjustment(graph, treatments, outcome, columns) -> list[str]:
    """Observed parents of the treatments (minus the treatments). Raises WhatIfError when an
    unobserved parent can reach the outcome other than through the treatments."""
    import networkx as nx
    g = graph.to_networkx()
    hidden = set(graph.unobserved(columns))
    adj, bad = set(), []
    for t in treatments:
        for p in g.predecessors(t):
            if p in treatments:
                continue
            if p in hidden:
                h = g.copy()
                h.remove_nodes_from(treatments)
                if outcome in h and p in h and nx.has_path(h, p, outcome):
                    bad.append(p)
            else:
                adj.add(p)
    if bad:
        causes = sorted(set(bad))
        raise WhatIfError(ngettext(
            "An unobserved cause of the treatments also reaches the outcome: {causes}; the "
            "effect is not identified.",
            "Unobserved causes of the treatments also reach the outcome: {causes}; the effect "
            "is not identified.", len(causes)).format(causes=", ".join(causes)))
    return sorted(adj)


def joint_counterfactual(frame: pd.DataFrame, new_values: Mapping[str, np.ndarray],
                         target: pd.Series, outcome: str = "badcase",
                         graph_text: str | None = None, seed: int = 0,
                         draws: int = N_DRAWS) -> JointCounterfactual:
    """frame: one row per case (analysis.cohort_frame); new_values: treatment -> values aligned
    with the rows where `target` is True (the cases whose treatments change); the model is fitted
    on every row with all variables recorded. Raises WhatIfError, NoData."""
    with one_blas_thread():
        return _joint(frame, new_values, target, outcome, graph_text, seed, draws)


def _joint(frame, new_values, target, outcome, graph_text, seed, draws):
    graph = parse_graph(graph_text if graph_text is not None else default_graph_text(),
                        known=frame.columns)
    treatments = tuple(new_values)
    for name in treatments + (outcome,):
        if name not in frame.columns:
            raise WhatIfError(_("'{name}' is not in the data.").format(name=name))
        if name not in graph.nodes:
            raise WhatIfError(_("'{name}' is not a node of the causal graph.").format(name=name))
    adjust = parent_adjustment(graph, treatments, outcome, frame.columns)
    used = list(treatments) + adjust + [outcome]
    data = frame[used].apply(pd.to_numeric, errors="coerce").astype(float)
    keep = data.notna().all(axis=1)
    d = data[keep]
    if len(d) < MIN_ROWS:
        raise NoData(_("Only {n_d} cases have {x} all recorded; at least "
                     "{MIN_ROWS} are needed.").format(n_d=len(d), x=', '.join(used), MIN_ROWS=MIN_ROWS))
    tgt = pd.Series(target, index=frame.index).fillna(False).astype(bool)
    new = pd.DataFrame({t: np.asarray(v, dtype=float) for t, v in new_values.items()},
                       index=frame.index[tgt])
    tgt_ok = tgt & keep
    tgt_ok[tgt_ok] = new.loc[tgt_ok[tgt_ok].index].notna().all(axis=1).to_numpy()
    if not tgt_ok.any():
        raise NoData(_("No target case has every variable recorded."))
    warn = []
    if int(tgt.sum()) > int(tgt_ok.sum()):
        k = int(tgt.sum() - tgt_ok.sum())
        warn.append(ngettext("{sum:,} target case left out: a variable is missing.",
                             "{sum:,} target cases left out: a variable is missing.", k)
                    .format(sum=k))
    y = d[outcome].to_numpy()
    binary = set(np.unique(y)) <= {0.0, 1.0}
    maps = {c: spline_basis(d[c].to_numpy(), N_KNOTS_TREATMENT if c in treatments else N_KNOTS_ADJUST,
                            ranks=c not in treatments) for c in treatments + tuple(adjust)}

    def features(df, override=None):
        cols = [np.ones((len(df), 1))]
        for c in treatments + tuple(adjust):
            v = (override[c] if override is not None and c in override else df[c]).to_numpy(float)
            cols.append(maps[c](v))
        return np.hstack(cols)

    X = features(d)
    widths = [1] + [maps[c](d[c].to_numpy(float)[:1]).shape[1] for c in treatments + tuple(adjust)]
    fit = (fit_logistic_auto(X, y, penalised=penalised_columns(widths)) if binary
           else fit_ols(X, y))
    if binary and getattr(fit, "ridge", 0.0):
        warn.append(ridge_warning(fit.ridge, label(outcome, False)))
    dt = d.loc[tgt_ok[tgt_ok].index]
    nt = new.loc[dt.index]
    warn += _outside_range(d, nt, treatments)
    yt = dt[outcome].to_numpy()
    betas = np.vstack([fit.params, coefficient_draws(np.asarray(fit.params, float),
                                                     np.asarray(fit.cov_params(), float),
                                                     draws, seed)])
    expected, sums, p_obs, p_new = _counterfactuals(features(dt), features(dt, nt), yt, betas,
                                                    binary, seed)
    a = (1 - CONFIDENCE) / 2
    per_case = pd.DataFrame({"y": yt, "p_obs": p_obs, "p_new": p_new, "y_new_expected": expected},
                            index=dt.index)
    model = (_("logistic regression") if binary else _("linear regression")) + \
        _(" of {outcome} on splines of {x}").format(outcome=label(outcome, False), x=', '.join(label(t, False) for t in treatments)) + \
        (_(" adjusted for {x}").format(x=', '.join(label(c, False) for c in adjust)) if adjust else "")
    return JointCounterfactual(
        outcome=outcome, treatments=treatments, adjustment=tuple(adjust),
        observed=float(yt.sum()), predicted=float(expected.sum()),
        ci_low=float(np.quantile(sums, a)), ci_high=float(np.quantile(sums, 1 - a)),
        n_fit=int(len(d)), n_target=int(len(dt)), per_case=per_case, model=model,
        warnings=tuple(warn))


def _outside_range(d: pd.DataFrame, nt: pd.DataFrame, treatments) -> list[str]:
    """A warning per treatment whose new values leave the range the model was fitted on."""
    warn = []
    for t in treatments:
        lo, hi = float(d[t].min()), float(d[t].max())
        out = int(((nt[t] < lo - 1e-12) | (nt[t] > hi + 1e-12)).sum())
        if out:
            warn.append(ngettext(
                "{out:,} case moves {x} outside its observed range [{lo:.3g}, {hi:.3g}]: "
                "extrapolation.",
                "{out:,} cases move {x} outside its observed range [{lo:.3g}, {hi:.3g}]: "
                "extrapolation.", out).format(out=out, x=label(t, False), lo=lo, hi=hi))
    return warn


def _counterfactuals(Xo: np.ndarray, Xn: np.ndarray, yt: np.ndarray, betas: np.ndarray,
                     binary: bool, seed: int):
    """(expected outcome per case under the new values, the outcome's sum per coefficient
    draw, the model's prediction per case as observed and as changed) from the design
    matrices of the observed and the new values and the coefficients (row 0: the fit, then
    the draws). A 0/1 outcome follows the monotone latent-threshold counterfactual, its sums
    sampled (seeded); a continuous one shifts by the model's difference."""
    if binary:
        rng = np.random.default_rng([seed, 0x6A6F696E])
        po, pn = logistic(Xo @ betas.T), logistic(Xn @ betas.T)
        cf = monotone_counterfactual(yt[:, None], po, pn)
        sums = (rng.random(cf[:, 1:].shape) < cf[:, 1:]).sum(axis=0).astype(float)
        return cf[:, 0], sums, po[:, 0], pn[:, 0]
    delta = (Xn - Xo) @ betas.T
    return yt + delta[:, 0], (yt[:, None] + delta[:, 1:]).sum(axis=0), Xo @ betas[0], \
        Xn @ betas[0]
