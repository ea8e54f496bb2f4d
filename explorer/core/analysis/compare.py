"""Badcase vs control, metric by metric (DESIGN `comparison`).

Numeric rows, per metric with data (NULLs dropped per metric, so n differs by metric):
- bad_mean, control_mean (arithmetic means), diff_pct = (bad - control) / |control| x 100;
- p_value: two-sided Mann-Whitney U (scipy.stats.mannwhitneyu, method "auto": exact for small
  samples without ties, else the normal approximation with tie and continuity correction); a
  permutation p (every split when there are at most 9,999, else 9,999 seeded ones) when a group
  has fewer than SMALL_GROUP (20) values; `test` says which;
- hedges_g: Cohen's d times Hedges' small-sample correction J = 1 - 3 / (4 (n1 + n2) - 9);
- rank_biserial: 2 U / (n1 n2) - 1, the effect size of the Mann-Whitney test itself (share of
  pairs where the badcase is higher minus share where it is lower), with DeLong's interval;
- a group with fewer than MIN_SUPPORT (10) values gets a note: too few to say anything;
- p_adjusted: Benjamini-Hochberg (scipy.stats.false_discovery_control, method "bh") over every
  row of the table that has a p-value (numeric and categorical rows form one family);
- cohens_d = (bad_mean - control_mean) / pooled SD, pooled SD = sqrt(((n1-1) s1^2 +
  (n2-1) s2^2) / (n1 + n2 - 2)), s^2 with ddof=1 (Cohen 1988);
- ci_low / ci_high: Welch's confidence interval (level ci_level, 0.95) of bad_mean -
  control_mean (unequal variances, Welch-Satterthwaite degrees of freedom; scipy.stats.ttest_ind(equal_var=False)
  .confidence_interval, Welch 1947): a normal-theory interval, which the means of a few dozen
  values or more support whatever the metric's distribution; None (never numbers) when it is
  undefined (no variance within either group).
Categorical rows: the share of bound requests truncated at the length limit (finish_reason =
"length"), errored (error not empty) and preempted at least once (num_preemptions >= 1),
compared with Fisher's exact test (scipy.stats.fisher_exact, two-sided) and the odds ratio.
Fewer than 2 values in a group, no variation or a zero control mean give None plus `reason`.
Every row but the workload's own (prompt / output length) also carries its difference at equal
workload (adjusted_*: analysis/workload.py, van Elteren's stratified test over cells of length x
category x eval x engine version); Comparison.adjusted_for names the covariates.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import NoData
from ..schema import CONTEXT_METRICS as CONTEXT_UNITS, REQUEST_METRICS
from .cohort import (CASE_METRICS, CONTEXT_METRICS, ENGINE_METRICS, TEXT_METRICS, Cohort,
                     cohort_frame)
from .evidence import MIN_SUPPORT, hedges_g
from .results import Comparison, MetricRow
from .signals import CATEGORICAL, signal as _signal
from explorer.core.i18n import _

DEFAULT_METRICS = ENGINE_METRICS + CONTEXT_METRICS + CASE_METRICS
DEFAULTS = {"metrics": DEFAULT_METRICS, "alpha": 0.05, "ci_level": 0.95, "categorical": True}

def welch_mean_diff_ci(bad: np.ndarray, control: np.ndarray,
                       level: float = 0.95) -> tuple[float | None, float | None]:
    """Welch's confidence interval of mean(bad) - mean(control) (scipy.stats.ttest_ind with
    equal_var=False); (None, None) when it is undefined (both groups without variance).
    Needs >= 2 values per group."""
    from scipy import stats

    ci = stats.ttest_ind(bad, control, equal_var=False).confidence_interval(level)
    lo, hi = float(ci.low), float(ci.high)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (None, None)


# Below this many values in a group the Mann-Whitney p is a permutation p (exact enumeration
# when there are fewer distinct splits than N_PERMUTATIONS): the normal approximation is poor
# with few values and ties, and scipy's "exact" assumes no ties.
SMALL_GROUP = 20
N_PERMUTATIONS = 9999


def _sorted(b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    """(argsort(b), argsort(c), sorted b, sorted c): each group sorted once, for the placements
    and scipy's Mann-Whitney test (which ranks the pooled values; two sorted runs rank faster)."""
    ob, oc = np.argsort(b), np.argsort(c)
    return ob, oc, b[ob], c[oc]


def placements(b: np.ndarray, c: np.ndarray, order: tuple[np.ndarray, ...] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values, in the order of b and c: V10_i = (#c < b_i + 0.5 #c == b_i)
    / n_control (share of control values below each badcase, ties half) and V01_j = 1 -
    (#b < c_j + 0.5 #b == c_j) / n_bad (share of badcases above each control value). The counts
    by np.searchsorted of each sorted group in the other (the same numbers as the mid-ranks'
    differences, pooled minus within-group, without ranking the pooled values and each group:
    4 sorts per metric -> 2). order: _sorted(b, c) when the caller has it."""
    ob, oc, bs, cs = order if order is not None else _sorted(b, c)
    nb, nc = len(b), len(c)
    v10, v01 = np.empty(nb), np.empty(nc)
    v10[ob] = (np.searchsorted(cs, bs, "left") + np.searchsorted(cs, bs, "right")) / 2 / nc
    v01[oc] = 1 - (np.searchsorted(bs, cs, "left") + np.searchsorted(bs, cs, "right")) / 2 / nb
    return v10, v01


def rank_biserial(b: np.ndarray, c: np.ndarray, level: float = 0.95,
                  order: tuple[np.ndarray, ...] | None = None
                  ) -> tuple[float, float | None, float | None]:
    """Rank-biserial correlation r = 2 A - 1 of bad vs control, A = U / (n_bad n_control) the
    probability that a badcase's value exceeds a control case's (ties count half; U the
    Mann-Whitney statistic of the bad group, so r is the effect size of the test the row
    reports; Kerby 2014), with DeLong's confidence interval (DeLong, DeLong & Clarke-Pearson
    1988: placement values (see placements), var A = var(V10) / n_bad + var(V01) / n_control),
    clipped to [-1, 1]. (r, None, None) when a group has fewer than 2 values or the
    placements do not vary (complete separation: DeLong's variance is 0).
    order: _sorted(b, c) when the caller has it."""
    from scipy import stats

    nb, nc = len(b), len(c)
    v10, v01 = placements(b, c, order)
    a = float(v10.mean())
    if nb < 2 or nc < 2:
        return 2 * a - 1, None, None
    se = float(np.sqrt(v10.var(ddof=1) / nb + v01.var(ddof=1) / nc))
    if se == 0:        # every pair ordered alike (or tied): the interval is undefined
        return 2 * a - 1, None, None
    z = stats.norm.ppf(0.5 + level / 2)
    lo, hi = max(0.0, a - z * se), min(1.0, a + z * se)
    return 2 * a - 1, 2 * lo - 1, 2 * hi - 1


def _mw_p(b: np.ndarray, c: np.ndarray, seed: int = 0,
          order: tuple[np.ndarray, ...] | None = None) -> tuple[float, str]:
    """Two-sided Mann-Whitney U p and the test's name: scipy's default ("auto") unless a group
    has fewer than SMALL_GROUP values; then a permutation p of the smaller group's rank sum
    (U plus a constant) over the pooled mid-ranks, which are fixed under relabelling: every
    split enumerated when there are at most N_PERMUTATIONS, else N_PERMUTATIONS seeded random
    splits (p = (count + 1) / (N + 1)); two-sided as twice the smaller one-sided p (scipy's
    convention). By hand because scipy's permutation method re-ranks every resample (2 s for
    5 against 2,000 values with 999 resamples, measured). order: _sorted(b, c) when the caller
    has it: scipy then gets each group sorted (the same U, ties and p: the test depends on the
    values of each group, not their order; the pooled ranking of two sorted runs is faster)."""
    from math import comb

    from scipy import stats

    if min(len(b), len(c)) >= SMALL_GROUP:
        if order is not None:
            b, c = order[2], order[3]
        return float(stats.mannwhitneyu(b, c, alternative="two-sided").pvalue), "mann-whitney-u"
    ranks = stats.rankdata(np.concatenate([b, c]))
    k, n = min(len(b), len(c)), len(ranks)
    obs = ranks[:len(b)].sum() if len(b) == k else ranks[len(b):].sum()
    if comb(n, k) <= N_PERMUTATIONS:
        import itertools
        sums = np.array([ranks[list(i)].sum() for i in itertools.combinations(range(n), k)])
        ge, le, total, extra = (sums >= obs - 1e-9).sum(), (sums <= obs + 1e-9).sum(), len(sums), 0
    else:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n, (N_PERMUTATIONS, k))
        while True:       # k distinct indices per row: redraw rows with a repeat (uniform sets)
            s_ = np.sort(idx, axis=1)
            dup = (np.diff(s_, axis=1) == 0).any(axis=1)
            if not dup.any():
                break
            idx[dup] = rng.integers(0, n, (int(dup.sum()), k))
        sums = ranks[idx].sum(axis=1)
        ge, le, total, extra = (sums >= obs - 1e-9).sum(), (sums <= obs + 1e-9).sum(), len(sums), 1
    p = min(1.0, 2 * (min(ge, le) + extra) / (total + extra))
    return float(p), "mann-whitney-u (permutation)"


def _numeric_row(metric: str, b: np.ndarray, c: np.ndarray, p: dict) -> MetricRow:

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
    pv = d = g = lo = hi = r = rlo = rhi = None
    test = "mann-whitney-u"
    if nb < 2 or nc < 2:
        reasons.append(_("too few values (n_bad={nb}, n_control={nc}; 2 per group needed)").format(nb=nb, nc=nc))
    elif np.ptp(np.concatenate([b, c])) == 0:
        reasons.append(_("no variation (every value is equal)"))
    else:
        order = _sorted(b, c)
        pv, test = _mw_p(b, c, order=order)
        r, rlo, rhi = rank_biserial(b, c, p["ci_level"], order)
        sp = np.sqrt(((nb - 1) * b.var(ddof=1) + (nc - 1) * c.var(ddof=1)) / (nb + nc - 2))
        if sp > 0:
            d = (mb - mc) / sp
            g = hedges_g(d, nb, nc)
            lo, hi = welch_mean_diff_ci(b, c, p["ci_level"])
        else:
            reasons.append(_("zero variance within both groups (Cohen's d and the CI undefined)"))
    if 2 <= min(nb, nc) < MIN_SUPPORT:
        reasons.append((_("only {n} badcases with a value: too few to say anything about this "
                          "metric (at least {min} are needed before it can name a module)")
                        if nb < MIN_SUPPORT else
                        _("only {n} control cases with a value: too few to say anything about "
                          "this metric (at least {min} are needed before it can name a module)"))
                       .format(n=min(nb, nc), min=MIN_SUPPORT))
    return MetricRow(metric=metric, kind="numeric", unit=unit, bad_mean=mb, control_mean=mc,
                     diff_pct=diff, p_value=pv, p_adjusted=None, cohens_d=d, n_bad=nb,
                     n_control=nc, ci_low=lo, ci_high=hi, test=test,
                     reason="; ".join(reasons) or None, hedges_g=g, rank_biserial=r,
                     rank_biserial_ci_low=rlo, rank_biserial_ci_high=rhi)


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


def frame_columns(params: dict | None = None) -> tuple[str, ...]:
    """The cohort-frame columns compare_metrics reads with `params`: badcase, the metrics (and
    the text lengths that stand in for missing token counts), the categorical signals' columns
    and the strata keys."""
    from .strata import STRATA_KEYS
    p = {**DEFAULTS, **(params or {})}
    return tuple(dict.fromkeys(("badcase", *p["metrics"], *TEXT_METRICS, "request_id",
                                "finish_reason", "error", "num_preemptions", *STRATA_KEYS,
                                *CASE_METRICS, "category")))


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
    from .strata import stratify
    from .workload import adjust_rows
    covs: tuple = ()
    if p.get("adjust", True):
        rows, covs = adjust_rows(frame, rows, _signal)
    return Comparison(rows=tuple(rows), alpha=p["alpha"],
                      strata=stratify(frame, rows, p["alpha"]) if p.get("strata", True) else None,
                      adjusted_for=covs)


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
