"""Badcase vs control, metric by metric (DESIGN `comparison`).

Numeric rows, per metric with data (NULLs dropped per metric, so n differs by metric):
- bad_mean, control_mean (arithmetic means), diff_pct = (bad - control) / |control| x 100;
- p_value: two-sided Mann-Whitney U (scipy.stats.mannwhitneyu, method "auto": exact for small
  samples without ties, else the normal approximation with tie and continuity correction);
- p_adjusted: Benjamini-Hochberg (scipy.stats.false_discovery_control, method "bh") over every
  row of the table that has a p-value (numeric and categorical rows form one family);
- cohens_d = (bad_mean - control_mean) / pooled SD, pooled SD = sqrt(((n1-1) s1^2 +
  (n2-1) s2^2) / (n1 + n2 - 2)), s^2 with ddof=1 (Cohen 1988);
- ci_low / ci_high: Welch's confidence interval (level ci_level, 0.95) of bad_mean -
  control_mean (unequal variances, Welch-Satterthwaite degrees of freedom; scipy.stats.ttest_ind(equal_var=False)
  .confidence_interval, Welch 1947): a normal-theory interval, which the means of a few dozen
  values or more support whatever the metric's distribution.
Categorical rows: the share of bound requests truncated at the length limit (finish_reason =
"length"), errored (error not empty) and preempted at least once (num_preemptions >= 1),
compared with Fisher's exact test (scipy.stats.fisher_exact, two-sided) and the odds ratio.
Fewer than 2 values in a group, no variation or a zero control mean give None plus `reason`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import NoData
from ..schema import CONTEXT_METRICS as CONTEXT_UNITS, REQUEST_METRICS
from .cohort import (CASE_METRICS, CONTEXT_METRICS, ENGINE_METRICS, TEXT_METRICS, Cohort,
                     cohort_frame)
from .results import Comparison, MetricRow
from explorer.core.i18n import N_, _

DEFAULT_METRICS = ENGINE_METRICS + CONTEXT_METRICS + CASE_METRICS
DEFAULTS = {"metrics": DEFAULT_METRICS, "alpha": 0.05, "ci_level": 0.95, "categorical": True}

# signal name -> (description, function(frame) -> (has_signal bool array, judged bool array))
CATEGORICAL = {
    "finish_reason_length": N_("truncated at the length limit (finish_reason = length)"),
    "errored": N_("errored"),
    "preempted": N_("preempted at least once"),
}


def _signal(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    bound = frame["request_id"].notna().to_numpy()
    if name == "finish_reason_length":
        fr = frame["finish_reason"]
        judged = bound & fr.notna().to_numpy()
        return judged & (fr.astype("string").str.lower() == "length").fillna(False).to_numpy(), judged
    if name == "errored":
        err = frame["error"]
        has = err.notna() & (err.astype("string").str.strip() != "").fillna(False)
        return bound & has.to_numpy(), bound
    if name == "preempted":
        p = frame["num_preemptions"]
        judged = bound & p.notna().to_numpy()
        return judged & (p.fillna(0) >= 1).to_numpy(), judged
    raise KeyError(name)


def welch_mean_diff_ci(bad: np.ndarray, control: np.ndarray,
                       level: float = 0.95) -> tuple[float | None, float | None]:
    """Welch's confidence interval of mean(bad) - mean(control) (scipy.stats.ttest_ind with
    equal_var=False); (None, None) when it is undefined (both groups without variance).
    Needs >= 2 values per group."""
    from scipy import stats

    ci = stats.ttest_ind(bad, control, equal_var=False).confidence_interval(level)
    lo, hi = float(ci.low), float(ci.high)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (None, None)


def _numeric_row(metric: str, b: np.ndarray, c: np.ndarray, p: dict) -> MetricRow:
    from scipy import stats

    unit = {**REQUEST_METRICS, **CONTEXT_UNITS}.get(metric, "tokens" if metric in CASE_METRICS else
                               "characters" if metric in TEXT_METRICS else "")
    nb, nc = len(b), len(c)
    mb = float(b.mean()) if nb else None
    mc = float(c.mean()) if nc else None
    reasons = []
    diff = None
    if mb is not None and mc is not None:
        if mc == 0:
            reasons.append(_("control mean is 0 (no relative difference)"))
        else:
            diff = (mb - mc) / abs(mc) * 100
    pv = d = lo = hi = None
    if nb < 2 or nc < 2:
        reasons.append(_("too few values (n_bad={nb}, n_control={nc}; 2 per group needed)").format(nb=nb, nc=nc))
    elif np.ptp(np.concatenate([b, c])) == 0:
        reasons.append(_("no variation (every value is equal)"))
    else:
        pv = float(stats.mannwhitneyu(b, c, alternative="two-sided").pvalue)
        sp = np.sqrt(((nb - 1) * b.var(ddof=1) + (nc - 1) * c.var(ddof=1)) / (nb + nc - 2))
        if sp > 0:
            d = (mb - mc) / sp
        else:
            reasons.append(_("zero variance within both groups (Cohen's d and the CI undefined)"))
        lo, hi = welch_mean_diff_ci(b, c, p["ci_level"])
    return MetricRow(metric=metric, kind="numeric", unit=unit, bad_mean=mb, control_mean=mc,
                     diff_pct=diff, p_value=pv, p_adjusted=None, cohens_d=d, n_bad=nb,
                     n_control=nc, ci_low=lo, ci_high=hi, test="mann-whitney-u",
                     reason="; ".join(reasons) or None)


def _categorical_row(name: str, frame: pd.DataFrame) -> MetricRow | None:
    from scipy import stats

    has, judged = _signal(frame, name)
    bad = (frame["badcase"] == 1).to_numpy()
    jb, jc = judged & bad, judged & ~bad
    nb, nc = int(jb.sum()), int(jc.sum())
    if nb == 0 and nc == 0:
        return None
    kb, kc = int((has & jb).sum()), int((has & jc).sum())
    sb = kb / nb if nb else None
    sc = kc / nc if nc else None
    reason = pv = orr = diff = None
    if sb is not None and sc is not None:
        diff = (sb - sc) / sc * 100 if sc > 0 else None
    if nb == 0 or nc == 0:
        reason = (_("no bound request in the badcase group") if nb == 0 else
                  _("no bound request in the control group"))
    elif kb == 0 and kc == 0:
        reason = _("no request {what}").format(what=_(CATEGORICAL[name]))
    else:
        res = stats.fisher_exact([[kb, nb - kb], [kc, nc - kc]], alternative="two-sided")
        pv = float(res.pvalue)
        orr = float(res.statistic)
        if sc == 0:
            reason = _("no control request has the signal (relative difference undefined)")
    return MetricRow(metric=name, kind="categorical", unit="share", bad_mean=sb, control_mean=sc,
                     diff_pct=diff, p_value=pv, p_adjusted=None, cohens_d=None, n_bad=nb,
                     n_control=nc, odds_ratio=orr, test="fisher-exact", reason=reason)


def compare_metrics(store, cohort: Cohort, params: dict | None = None,
                    frame: pd.DataFrame | None = None) -> Comparison:
    """Badcase vs control per metric (see the module doc for every formula).

    params: metrics (sequence of cohort_frame columns; default the 7 engine metrics + prompt /
    completion tokens), alpha (0.05), ci_level (0.95), categorical (True: add the finish_reason / error / preemption rows).
    Metrics without any value in either group are left out; when prompt / completion tokens are
    missing everywhere, prompt / prediction length in characters stand in.
    Raises NoData when the cohort has no badcase or no control case, or no metric has data."""
    p = {**DEFAULTS, **(params or {})}
    if frame is None:
        frame = cohort_frame(store, cohort)
    bad = frame["badcase"] == 1
    if not bad.any():
        raise NoData(_("the cohort has no badcase"))
    if bad.all():
        raise NoData("the cohort has no control case (no correct case"
                     + (" of the badcases' categories)" if cohort.control == "same-category"
                        else ")"))
    metrics: list[str] = list(p["metrics"])
    if not any(frame[m].notna().any() for m in CASE_METRICS if m in metrics and m in frame):
        metrics += [m for m in TEXT_METRICS if m not in metrics]
    rows = []
    is_bad = bad.to_numpy()
    for m in metrics:
        if m not in frame:
            raise ValueError(f"unknown metric {m!r}; cohort columns: {', '.join(frame.columns)}")
        col = pd.to_numeric(frame[m], errors="coerce").to_numpy(dtype=float)
        b = col[is_bad]
        c = col[~is_bad]
        b, c = b[np.isfinite(b)], c[np.isfinite(c)]
        if len(b) == 0 and len(c) == 0:
            continue
        rows.append(_numeric_row(m, b, c, p))
    if p["categorical"]:
        for name in CATEGORICAL:
            r = _categorical_row(name, frame)
            if r is not None:
                rows.append(r)
    if not rows:
        raise NoData(_("no metric has a value in this cohort"))
    rows = _adjust(rows)
    return Comparison(rows=tuple(rows), alpha=p["alpha"])


def _adjust(rows: Sequence[MetricRow]) -> list[MetricRow]:
    """Fill p_adjusted with Benjamini-Hochberg over the rows that have a p-value."""
    from dataclasses import replace

    from scipy import stats

    idx = [i for i, r in enumerate(rows) if r.p_value is not None]
    out = list(rows)
    if idx:
        adj = stats.false_discovery_control([rows[i].p_value for i in idx], method="bh")
        for i, a in zip(idx, adj):
            out[i] = replace(rows[i], p_adjusted=float(a))
    return out
