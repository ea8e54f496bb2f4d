"""whatif_scale: SLA attainment under a scaling scenario ("queue_ms 20 % lower: attainment
from A to B"), with the same backdoor identification as run_whatif and linear additive-noise
counterfactuals (see whatif_scale's docstring). Metrics in their own units (ms); attainment is
the share of rows meeting every threshold (0..1).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, TypedDict

import numpy as np
import pandas as pd

from ...errors import NoData
from ..causal_graph import default_graph_text, parse_graph
from .constants import CONFIDENCE, MIN_ROWS, N_DRAWS
from .estimator import scenario_estimator_class
from ...errors import Cancelled
from .exceptions import WhatIfError
from .fits import one_blas_thread
from .identify import backdoor_set
from .sla_met import default_sla
from explorer.core.i18n import _
from explorer.core.names import label
from ... import fmt


class ScaleDict(TypedDict):
    """ScaleResult.to_dict(): the What-if panel's SLA-scaling row (its fields and `text`)."""
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
    assumptions: list[str]
    warnings: list[str]
    text: str


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
        """One line for the user: "scheduling delay lower by 20%: SLA attainment from 0.81 to
        0.87 (95% CI 0.86 to 0.88)"; the interval's ends never read alike (fmt.interval)."""
        pct = (self.factor - 1) * 100
        text = (_("{metric} lower by {pct:.0f}%: SLA attainment from {before:.2f} to "
                  "{after:.2f} ({confidence:.0%} CI {interval})") if pct < 0 else
                _("{metric} higher by {pct:.0f}%: SLA attainment from {before:.2f} to "
                  "{after:.2f} ({confidence:.0%} CI {interval})"))
        return text.format(metric=label(self.metric, False), pct=abs(pct),
                           before=self.attainment_before, after=self.attainment_after,
                           confidence=CONFIDENCE, interval=fmt.interval(self.ci_low, self.ci_high))

    def to_dict(self) -> ScaleDict:
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
    with one_blas_thread():
        return _whatif_scale(frame, metric, factor, thresholds, graph_text, selected, seed,
                             progress, cancelled)


def _whatif_scale(frame, metric, factor, thresholds, graph_text, selected, seed, progress,
                  cancelled) -> ScaleResult:
    thresholds = thresholds or default_sla()
    th = {k: float(v) for k, v in thresholds.items() if k in frame.columns}
    if not th:
        raise WhatIfError(_("SLA attainment needs one of ") + ", ".join(thresholds) + _(" in the data."))
    if metric not in frame.columns:
        raise WhatIfError(_("'{metric}' is not in the data.").format(metric=metric))
    if not (math.isfinite(factor) and factor >= 0):
        raise WhatIfError(_("The scaling factor must be a non-negative number, not {factor}.").format(factor=factor))
    graph = parse_graph(graph_text if graph_text is not None else default_graph_text(),
                        known=frame.columns)
    if metric not in graph.nodes:
        raise WhatIfError(_("'{metric}' is not a node of the causal graph.").format(metric=metric))
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
            raise Cancelled(_("what-if cancelled"))
        if progress is not None:
            progress(i, steps)
        if m == metric:
            slopes[m], ses[m], adjust_by[m] = 1.0, 0.0, []
            continue
        if m not in desc:
            slopes[m], ses[m], adjust_by[m] = 0.0, 0.0, []
            continue
        slopes[m], ses[m], adjust_by[m] = _slope(graph, g, data, metric, m, observed_cols)
    keep = data[[metric] + list(th)].notna().all(axis=1) & sel
    n_dropped = int((sel & ~keep).sum())
    if n_dropped:
        warn.append(_("{n_dropped} selected rows dropped: missing {metric} or a threshold metric.").format(n_dropped=n_dropped, metric=metric))
    d = data.loc[keep]
    if d.empty:
        raise NoData(_("No selected row has {metric} and {x} all recorded.").format(metric=metric, x=', '.join(th)))
    before, after, lo, hi = _attainment(d, th, (factor - 1.0) * d[metric].to_numpy(), slopes,
                                        ses, seed)
    if progress is not None:
        progress(steps, steps)
    if all(slopes[m] == 0.0 for m in th):
        warn.append(_("The graph has no path from {metric} to any SLA metric "
                    "({x}): attainment cannot change.").format(metric=metric, x=', '.join(th)))
    assumptions = (
        _("The causal graph is right, and each adjustment set blocks every backdoor path."),
        _("Each SLA metric responds linearly to {metric}, with the case's own deviation (noise) "
        "unchanged by the scenario (additive noise).").format(metric=metric),
        _("No interference: scaling these requests does not change the others."),
    )
    return ScaleResult(metric=metric, factor=float(factor), thresholds=th,
                       attainment_before=before, attainment_after=after, ci_low=min(lo, after),
                       ci_high=max(hi, after), n=int(len(d)), n_dropped=n_dropped,
                       slopes=slopes, common_causes=adjust_by, assumptions=assumptions,
                       warnings=tuple(warn))


def _slope(graph, g, data: pd.DataFrame, metric: str, m: str, observed_cols: list[str]):
    """(slope, its standard error, adjustment set) of SLA metric m on `metric`: OLS of m on
    `metric` and its backdoor adjustment set (DoWhy identification on the graph)."""
    scenario_estimator_class()
    adj = sorted(backdoor_set(graph, g, data, metric, m, observed_cols))  # set order varies
    sub = data[[metric, m] + adj].dropna()
    if len(sub) < MIN_ROWS:
        raise NoData(_("Only {n_sub} rows have {metric}, {x} and the adjustment set.").format(n_sub=len(sub), metric=metric, x=m))
    X = np.column_stack([np.ones(len(sub)), sub[[metric] + adj].to_numpy()])
    y = sub[m].to_numpy()
    beta, *_rest = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    s2 = float(resid @ resid) / max(1, len(y) - X.shape[1])
    cov = s2 * np.linalg.pinv(X.T @ X)
    return float(beta[1]), float(math.sqrt(max(cov[1, 1], 0))), adj


def _attainment(d: pd.DataFrame, th: dict, shift: np.ndarray, slopes: dict, ses: dict,
                seed: int) -> tuple[float, float, float, float]:
    """SLA attainment of the rows `d` (every threshold of `th` met) as observed, after each
    SLA metric moved by slope x shift, and its interval (N_DRAWS seeded normal draws of the
    slopes): (before, after, lo, hi)."""
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
    return before, after, float(np.quantile(a, (1 - CONFIDENCE) / 2)), \
        float(np.quantile(a, 1 - (1 - CONFIDENCE) / 2))
