"""Pooling made visible: when the cohort's cases come from several engine versions (or evals),
the comparison's significant rows are recomputed per stratum and tested within strata.

- stratum: the engine version of the case's run when the cohort's cases ran on two or more,
  else the eval when there are two or more (STRATA_KEYS); strata with fewer than 2 badcases or
  2 control cases with a value are left out of the tests (listed with their n);
- numeric metric: a stratified permutation test of T = sum_s w_s (mean_bad_s - mean_control_s),
  w_s = n_s / N, badcase labels permuted WITHIN each stratum (N_PERMUTATIONS = 499, seeded: enough to tell p < 0.05; p =
  (count + 1) / (N + 1), two-sided on |T|; on a seeded sample of MAX_ROWS cases when larger), so a difference that only comes from the mix of
  strata (more badcases on a slower release) does not count;
- share (categorical row): Cochran-Mantel-Haenszel (statsmodels StratifiedTable.test_null_odds);
- disagree: strata with at least MIN_SUPPORT badcases whose difference has the opposite sign of
  the pooled one and is significant on its own (Mann-Whitney / Fisher within the stratum,
  p < alpha); a warning says so, and also when the pooled difference does not hold within
  strata (stratified p >= alpha).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .evidence import MIN_SUPPORT
from .signals import signal as _signal
from ..i18n import N_, _

STRATA_KEYS = ("engine_version", "eval_id")
N_PERMUTATIONS = 499
MAX_METRICS = 8
MAX_ROWS = 5_000
_SIGNAL = {"finish_reason_length", "errored", "preempted"}


def strata_key(frame: pd.DataFrame) -> str | None:
    """The column the cohort pools over, or None (one version and one eval)."""
    for key in STRATA_KEYS:
        if key in frame and frame[key].dropna().nunique() >= 2:
            return key
    return None


def _perm_p(x: np.ndarray, bad: np.ndarray, strata: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """(T, p) of the stratified permutation test (module doc); permutations in blocks of 100,
    each stratum's labels shuffled with Generator.permuted (vectorised)."""
    rng = np.random.default_rng(seed)
    if len(x) > MAX_ROWS:     # a seeded sample keeps the permutations fast
        idx = np.sort(rng.choice(len(x), MAX_ROWS, replace=False))
        return _perm_p(x[idx], bad[idx], strata[idx], seed)
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    n = len(x)

    def stat(xs, lab, nb):       # lab: (k, n_s) 0/1 rows; one T term per row
        sb = lab @ xs
        return sb / nb - (xs.sum() - sb) / (len(xs) - nb)

    t0 = sum(len(g) / n * float(stat(x[g], bad[g][None, :].astype(float), bad[g].sum())[0])
             for g in groups)
    count, done = 0, 0
    while done < N_PERMUTATIONS:
        k = min(100, N_PERMUTATIONS - done)
        t = np.zeros(k)
        for g in groups:
            lab = bad[g].astype(float)
            shuffled = rng.permuted(np.broadcast_to(lab, (k, len(g))), axis=1)
            t += len(g) / n * stat(x[g], shuffled, lab.sum())
        count += int((np.abs(t) >= abs(t0) - 1e-12).sum())
        done += k
    return t0, (count + 1) / (N_PERMUTATIONS + 1)


def _within_p(b: np.ndarray, c: np.ndarray, metric: str) -> float | None:
    """The comparison's own test inside one stratum: Fisher's exact test for a share,
    Mann-Whitney U otherwise; None with fewer than 2 values in a group or no variation."""
    from scipy import stats
    if len(b) < 2 or len(c) < 2 or np.ptp(np.concatenate([b, c])) == 0:
        return None
    if metric in _SIGNAL:
        kb, kc = int(b.sum()), int(c.sum())
        return float(stats.fisher_exact([[kb, len(b) - kb], [kc, len(c) - kc]]).pvalue)
    return float(stats.mannwhitneyu(b, c, alternative="two-sided").pvalue)


def stratify(frame: pd.DataFrame, rows, alpha: float = 0.05) -> dict | None:
    """{"by", "strata": [{stratum, n_bad, n_control}], "rows": [{metric, stratum, bad_mean,
    control_mean, n_bad, n_control}], "tests": [{metric, test, statistic, p_value, pooled_diff,
    disagree: [strata], holds}], "warnings": [str]} for the comparison's significant rows, or
    None when nothing is pooled."""
    key = strata_key(frame)
    if key is None:
        return None
    def _sig(r, key):
        v = getattr(r, key, None)
        return v is not None and v < alpha
    # the pooled significant rows, and those significant only at equal workload (whose cells
    # include the strata: an effect in one version that pooling hides)
    sig = [r for r in rows if (_sig(r, "p_adjusted") or _sig(r, "adjusted_p_adjusted"))
           and r.bad_mean is not None and r.control_mean is not None][:MAX_METRICS]
    f = frame[frame[key].notna()]
    bad_all = (f["badcase"] == 1).to_numpy()
    st_all = f[key].astype(str).to_numpy()
    counts = [{"stratum": s, "n_bad": int((bad_all & (st_all == s)).sum()),
               "n_control": int((~bad_all & (st_all == s)).sum())} for s in sorted(set(st_all))]
    out_rows, tests, warns = [], [], []
    for r in sig:
        if r.metric in _SIGNAL:
            has, judged = _signal(f, r.metric)
            x, ok = has.astype(float), judged
        else:
            x = pd.to_numeric(f[r.metric], errors="coerce").to_numpy(dtype=float)
            ok = np.isfinite(x)
        x, b, st = x[ok], bad_all[ok], st_all[ok]
        keep = np.zeros(len(x), bool)
        for s in np.unique(st):
            m = st == s
            nb, nc = int(b[m].sum()), int((~b[m]).sum())
            out_rows.append({"metric": r.metric, "stratum": s, "n_bad": nb, "n_control": nc,
                             "bad_mean": float(x[m][b[m]].mean()) if nb else None,
                             "control_mean": float(x[m][~b[m]].mean()) if nc else None,
                             "p_value": _within_p(x[m][b[m]], x[m][~b[m]], r.metric)})
            if nb >= 2 and nc >= 2:
                keep |= m
        if not keep.any():
            continue
        x, b, st = x[keep], b[keep], st[keep]
        pooled = r.bad_mean - r.control_mean
        if r.metric in _SIGNAL:
            from statsmodels.stats.contingency_tables import StratifiedTable
            tables = [np.array([[((x == 1) & b & (st == s)).sum(), ((x == 0) & b & (st == s)).sum()],
                                [((x == 1) & ~b & (st == s)).sum(), ((x == 0) & ~b & (st == s)).sum()]])
                      for s in np.unique(st)]
            res = StratifiedTable(tables).test_null_odds(correction=False)
            stat, p, test = float(res.statistic), float(res.pvalue), N_("cochran-mantel-haenszel")
        else:
            stat, p = _perm_p(x, b, st)
            stat = float(stat)
            test = N_("stratified permutation (labels permuted within strata)")  # shown through _()
        disagree = [row["stratum"] for row in out_rows
                    if row["metric"] == r.metric and row["n_bad"] >= MIN_SUPPORT
                    and row["bad_mean"] is not None and row["control_mean"] is not None
                    and (row["bad_mean"] - row["control_mean"]) * pooled < 0
                    and row["p_value"] is not None and row["p_value"] < alpha]
        holds = bool(np.isfinite(p) and p < alpha)
        tests.append({"metric": r.metric, "test": test, "statistic": stat,
                      "p_value": float(p) if np.isfinite(p) else None,
                      "pooled_diff": pooled, "disagree": disagree, "holds": holds,
                      "pooled": _sig(r, "p_adjusted")})
    warns = _warnings(key, tests) + stratum_sentences(key, tests, out_rows, alpha)
    return {"by": key, "strata": counts, "rows": out_rows, "tests": tests, "warnings": warns}


def _warnings(key: str, tests: list) -> list[str]:
    from ..names import label
    what = _("engine versions") if key == "engine_version" else _("evals")
    out = []
    against = [t for t in tests if t["disagree"]]
    if against:
        out.append(_("The cohort pools {what}, and they disagree: {which}. The pooled difference "
                     "may come from the mix of {what} (Simpson's paradox); read the rows per "
                     "stratum.").format(what=what, which="; ".join(
                         _("{metric} goes the other way on {strata}").format(
                             metric=label(t["metric"], False), strata=", ".join(t["disagree"]))
                         for t in against[:3])))
    weak = [t for t in tests if not t["holds"] and not t["disagree"] and t.get("pooled", True)]
    if weak:
        out.append(_("Within {what}, {metrics} no longer differ significantly (stratified test "
                     "p >= 0.05): the pooled difference may come from the mix of {what}.").format(
                         what=what, metrics=", ".join(label(t["metric"], False) for t in weak[:4])))
    return out


MAX_STRATA_SHOWN = 4


def stratum_sentences(key: str, tests: list, rows: list, alpha: float = 0.05) -> list[str]:
    """One sentence per metric the strata warn about (goes the other way in a stratum, or no
    longer holds within strata) or that holds in some strata only: the difference in each
    stratum with its own test (Mann-Whitney U / Fisher; "within X only" when X's p, Bonferroni
    over the strata named, is < alpha), so the reader sees where it is and where it is not ("Per engine version, preemptions: 0.5.2:
    badcases 1.9 against 0.4 (p < 0.001, n = 40 / 300); 0.6.1: 0.2 against 0.2 (p 0.81, n =
    200 / 900)."). Strata with fewer than MIN_SUPPORT badcases are left out of the sentence,
    at most MAX_STRATA_SHOWN strata (the largest by badcases), the rest in report.json."""
    from ..fmt import num, pval
    from ..names import label
    what = _("Per engine version") if key == "engine_version" else _("Per eval")
    out = []
    for t in tests:
        part = [r for r in rows if r["metric"] == t["metric"] and r["n_bad"] >= MIN_SUPPORT
                and r["bad_mean"] is not None and r["control_mean"] is not None]
        if len(part) < 2:
            continue
        part = sorted(part, key=lambda r: -r["n_bad"])[:MAX_STRATA_SHOWN]
        # Bonferroni over the strata named: "within X only" is a claim about each of them
        found = [r["stratum"] for r in part if r["p_value"] is not None and r["p_value"] * len(part) < alpha]
        apart = bool(found) and len(found) < len(part)   # some strata show it, others do not
        if not apart and ((t["holds"] and not t["disagree"]) or not t.get("pooled", True)):
            continue  # holds within strata and no stratum stands apart: the pooled row says it
        m = t["metric"]
        share = m in _SIGNAL
        def value(v):
            return f"{100 * v:.1f}%" if share else num(v, m)
        def p_text(p):
            return _("p {p}").format(p=pval(p)) if p is not None else _("no test")
        each = "; ".join(_("{stratum}: badcases {bad} against {control} ({p}, n = {nb} / {nc})").format(
            stratum=r["stratum"], bad=value(r["bad_mean"]), control=value(r["control_mean"]),
            p=p_text(r["p_value"]), nb=f"{r['n_bad']:,}", nc=f"{r['n_control']:,}") for r in part)
        tail = (_("the difference is within {strata} only.").format(strata=", ".join(found)) if found
                else _("no stratum shows it on its own: the difference is between the strata."))
        out.append(_("{what}, {metric}: {each}; {tail}").format(
            what=what, metric=label(m, False), each=each, tail=tail))
    return out
