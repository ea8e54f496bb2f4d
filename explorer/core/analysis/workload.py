"""Workload before engine: each engine metric's badcase-vs-control difference at equal workload.

What the badcases were asked (prompt and output length, category, eval, and the engine version
they ran on, so that a difference between releases or evals is not read as one within them) is
a covariate, not a finding. Each comparison row gets, beside its raw difference:

- cells (coarsened exact matching, Iacus, King & Porro 2012): category x eval x engine version x
  prompt-length bin (N_PROMPT_BINS quantile bins of the cohort's prompt lengths) x output-length
  bin (N_OUTPUT_BINS); a missing value is its own level. Only cells holding badcases and control
  cases are used (`adjusted_n_bad`, `adjusted_n_control` count them);
- regression adjustment inside the cells: the metric minus its OLS fit on a cubic of each
  standardised log length (fitted on every case with a value), so that the length left inside
  a bin does not leak into the test;
- adjusted_p_value: van Elteren's stratified Wilcoxon rank-sum test over the cells (van Elteren
  1960; weights 1 / (N_s + 1), mid-ranks within each cell, the tie-corrected variance, a
  two-sided normal p; Lehmann, Nonparametrics 1975, s. 3.3); adjusted_p_adjusted:
  Benjamini-Hochberg over the table's adjusted tests;
- adjusted_diff: the mean over matched badcases of their cell's (bad - control) mean difference
  of the adjusted values (the effect on the badcases, cell weights = their badcases);
  adjusted_diff_pct relative to |control_mean|; adjusted_d: adjusted_diff over the raw pooled
  SD (the same scale as cohens_d), for a share Cohen's h of the matched badcases' share against
  that share minus adjusted_diff.

The length rows themselves (WORKLOAD_METRICS) are not adjusted: they are what the workload is.
TTFT's adjusted fields are of its prefill part, TTFT minus the scheduling delay (OWN_PART), at
equal uncached prompt tokens too (uncached_design): prefill is named only on a prefill signal at
equal prompt length, not on a longer queue or a lower hit rate.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

#: The case-level metrics that describe the workload (never a finding about the engine).
WORKLOAD_METRICS = ("prompt_tokens", "completion_tokens", "prompt_chars", "prediction_chars")
#: (prompt length, output length): token counts, else the texts' characters.
LENGTHS = (("prompt_tokens", "prompt_chars"), ("completion_tokens", "prediction_chars"))
#: Categorical covariates the cells match on (those present in the frame and varying).
KEYS = ("category", "eval_id", "engine_version")
N_PROMPT_BINS = 5
N_OUTPUT_BINS = 3
ADJUSTED_TEST = "van Elteren (stratified Wilcoxon) at equal workload"
#: A metric whose adjusted test is of its own part: TTFT = scheduling delay + prefill, so the
#: prefill signal is TTFT minus the queue time (a longer queue is the scheduler's evidence).
OWN_PART = {"ttft_ms": "queue_ms"}


def length_columns(frame: pd.DataFrame) -> list[str]:
    """The length columns the adjustment uses: per aspect the token count when any case has
    one, else the characters."""
    out = []
    for cols in LENGTHS:
        for c in cols:
            if c in frame and pd.to_numeric(frame[c], errors="coerce").notna().any():
                out.append(c)
                break
    return out


def covariates(frame: pd.DataFrame) -> list[str]:
    """The covariates the comparison is adjusted for in this frame: the length columns and the
    categorical keys that vary."""
    keys = [k for k in KEYS if k in frame and frame[k].dropna().nunique() >= 2]
    return length_columns(frame) + keys


def cells(frame: pd.DataFrame) -> np.ndarray:
    """One integer cell per row (module doc)."""
    parts = []
    for col, k in zip(length_columns(frame), (N_PROMPT_BINS, N_OUTPUT_BINS)):
        v = pd.to_numeric(frame[col], errors="coerce")
        r = v.rank(method="average", pct=True)
        parts.append(np.where(v.isna(), -1, np.minimum((r * k).fillna(0).to_numpy(), k - 1e-9)
                              .astype(int)))
    for key in KEYS:
        if key in frame:
            parts.append(pd.factorize(frame[key].astype(object), use_na_sentinel=True)[0])
    if not parts:
        return np.zeros(len(frame), dtype=int)
    return pd.MultiIndex.from_arrays(parts).factorize()[0]


def _design(frame: pd.DataFrame) -> np.ndarray:
    """[1, z, z^2, z^3 per length (z: standardised log1p length, 0 when missing), a missing
    indicator per length]."""
    cols = [np.ones(len(frame))]
    for c in length_columns(frame):
        v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
        miss = ~np.isfinite(v)
        z = np.log1p(np.clip(np.where(miss, 0, v), 0, None))
        sd = z[~miss].std() if (~miss).sum() > 1 else 0.0
        z = np.where(miss, 0.0, (z - z[~miss].mean()) / sd if sd > 0 else 0.0)
        cols += [z, z ** 2, z ** 3]
        if miss.any():
            cols.append(miss.astype(float))
    return np.column_stack(cols)


def uncached_design(frame: pd.DataFrame, X: np.ndarray) -> np.ndarray:
    """X plus a cubic of the standardised log uncached prompt tokens, prompt x (1 - hit rate)
    (0 and an indicator where unknown), and the standardised preemptions and batch size: prefill
    work is the uncached prompt, so a prefill signal is one at equal uncached length (a lower
    hit rate lengthens prefill: the cache's evidence, not the prefill module's), equal
    preemptions and batch."""
    if "kv_cache_hit_rate" not in frame or "prompt_tokens" not in frame:
        return X
    u = (pd.to_numeric(frame["prompt_tokens"], errors="coerce")
         * (1 - pd.to_numeric(frame["kv_cache_hit_rate"], errors="coerce"))).to_numpy(float)
    miss = ~np.isfinite(u)
    if miss.all():
        return X
    z = np.log1p(np.clip(np.where(miss, 0, u), 0, None))
    sd = z[~miss].std()
    z = np.where(miss, 0.0, (z - z[~miss].mean()) / sd if sd > 0 else 0.0)
    cols = [X, z, z ** 2, z ** 3] + ([miss.astype(float)] if miss.any() else [])
    # and at equal preemptions and running batch: a preempted prefill is recomputed, a chunked
    # prefill shares its steps with the batch's decodes (the scheduler's and batching's evidence)
    for c in ("num_preemptions", "batch_size"):
        if c in frame:
            v = pd.to_numeric(frame[c], errors="coerce").to_numpy(float)
            if np.isfinite(v).sum() > 1 and np.nanstd(v) > 0:
                cols += [np.where(np.isfinite(v), (v - np.nanmean(v)) / np.nanstd(v), 0.0),
                         (~np.isfinite(v)).astype(float)]
    return np.column_stack(cols)


def residualize(x: np.ndarray, X: np.ndarray) -> np.ndarray:
    """x minus its least-squares fit on X (rows with a finite x), NaN where x is not finite."""
    ok = np.isfinite(x)
    out = np.full(len(x), np.nan)
    if ok.sum() <= X.shape[1]:
        out[ok] = x[ok]
        return out
    beta = np.linalg.lstsq(X[ok], x[ok], rcond=None)[0]
    out[ok] = x[ok] - X[ok] @ beta
    return out


def ols_effect(x: np.ndarray, X: np.ndarray, t: np.ndarray) -> tuple[float, float] | None:
    """(coefficient of the 0/1 column t, its two-sided p) in the OLS of x on [X, t] with
    heteroscedasticity-robust (HC1, MacKinnon & White 1985) standard errors: the mean
    difference at equal covariates (a regression adjustment); None when it is undefined."""
    from scipy import stats
    ok = np.isfinite(x)
    A = np.column_stack([X[ok], t[ok].astype(float)])
    y = x[ok]
    n, k = A.shape
    if n <= k + 1:
        return None
    beta, *_ = np.linalg.lstsq(A, y, rcond=None)
    e = y - A @ beta
    try:
        inv = np.linalg.pinv(A.T @ A)
    except np.linalg.LinAlgError:
        return None
    cov = inv @ (A.T * e ** 2) @ A @ inv * n / (n - k)
    se = float(np.sqrt(max(cov[-1, -1], 0.0)))
    if not se > 0:
        return None
    return float(beta[-1]), float(2 * stats.t.sf(abs(beta[-1] / se), n - k))


def van_elteren(v: np.ndarray, bad: np.ndarray, cell: np.ndarray) -> dict | None:
    """van Elteren's test of the badcases' values `v` against the control's within `cell`s
    (module doc): {z, p_value, diff (badcase-weighted mean of the cells' mean differences),
    n_bad, n_control} over the cells that hold both groups; None when no cell does or the
    variance is 0. In numpy on one sort by (cell, value): the mid-ranks and tie counts of each
    cell are its runs of equal values (pandas' groupby rank and sizes of ~900k rows took 4-5 s
    a metric)."""
    from scipy import stats

    v = np.asarray(v, dtype=float)
    bad = np.asarray(bad).astype(bool)
    c = pd.factorize(np.asarray(cell))[0]
    k = int(c.max()) + 1 if len(c) else 0
    n_all = np.bincount(c, minlength=k)
    nb_all = np.bincount(c, weights=bad, minlength=k)
    both = (nb_all > 0) & (nb_all < n_all)
    keep = both[c]
    if not keep.any():
        return None
    v, bad, c = v[keep], bad[keep], c[keep]
    order = np.lexsort((v, c))
    vs, cs, bs = v[order], c[order], bad[order]
    pos = np.arange(len(vs))
    run = np.r_[True, (cs[1:] != cs[:-1]) | (vs[1:] != vs[:-1])]     # a new (cell, value)
    start = pos[run]
    length = np.diff(np.r_[start, len(vs)])
    cell_start = np.full(k, -1)
    first = np.r_[True, cs[1:] != cs[:-1]]
    cell_start[cs[first]] = pos[first]
    # the mid-rank of a run of equal values within its cell: its first rank + (length - 1) / 2
    mid = (start - cell_start[cs[run]] + 1) + (length - 1) / 2
    r = np.repeat(mid, length)
    N = np.bincount(cs, minlength=k).astype(float)
    nb = np.bincount(cs, weights=bs, minlength=k)
    rb = np.bincount(cs, weights=r * bs, minlength=k)
    sb = np.bincount(cs, weights=vs * bs, minlength=k)
    sc = np.bincount(cs, weights=vs * ~bs, minlength=k)
    t = np.bincount(cs[run], weights=length.astype(float) ** 3 - length, minlength=k)
    u = both
    N, nb, rb, t = N[u], nb[u], rb[u], t[u]
    nc = N - nb
    mb, mc = sb[u] / nb, sc[u] / nc
    w = 1.0 / (N + 1)
    num = (w * (rb - nb * (N + 1) / 2)).sum()
    tie = np.divide(t, N * (N - 1), out=np.zeros_like(t), where=N > 1)
    var = (w ** 2 * nb * nc / 12 * ((N + 1) - tie)).sum()
    diff = float(((mb - mc) * nb).sum() / nb.sum())
    out = {"diff": diff, "n_bad": int(nb.sum()), "n_control": int(nc.sum()),
           "bad_mean": float((mb * nb).sum() / nb.sum())}
    if not var > 0:
        return {**out, "z": None, "p_value": None}
    z = float(num / math.sqrt(var))
    return {**out, "z": z, "p_value": float(2 * stats.norm.sf(abs(z)))}


def adjust_rows(frame: pd.DataFrame, rows, signal) -> tuple[list, tuple[str, ...]]:
    """(the rows with their adjusted_* fields, the covariates adjusted for). signal(frame,
    name) -> (has, judged) of a categorical row (compare._signal)."""
    from scipy import stats

    from .evidence import cohens_h

    covs = tuple(covariates(frame))
    X = _design(frame)
    cell = cells(frame)
    bad = (frame["badcase"] == 1).to_numpy()
    out = []
    for r in rows:
        if r.metric in WORKLOAD_METRICS or r.p_value is None:
            out.append(r)
            continue
        if r.kind == "categorical":
            has, judged = signal(frame, r.metric)
            x = np.where(judged, has.astype(float), np.nan)
        else:
            x = pd.to_numeric(frame[r.metric], errors="coerce").to_numpy(dtype=float)
        test, Xm = ADJUSTED_TEST, X
        if r.metric in OWN_PART:
            # the metric's own part: TTFT minus the scheduling delay at equal uncached prompt
            # length is the prefill signal
            Xm = uncached_design(frame, X)
            part = (pd.to_numeric(frame[OWN_PART[r.metric]], errors="coerce").to_numpy(float)
                    if OWN_PART[r.metric] in frame else np.full(len(x), np.nan))
            if np.isfinite(part).any():
                x = np.where(np.isfinite(part), x - np.nan_to_num(part), x)
                test = ADJUSTED_TEST + f" (of {r.metric} minus {OWN_PART[r.metric]}, at equal " \
                    "uncached prompt tokens)"
        ok = np.isfinite(x)
        res = residualize(x, Xm)
        ve = van_elteren(res[ok], bad[ok], cell[ok])
        if ve is None or ve["n_bad"] < 2 or ve["n_control"] < 2:
            out.append(replace(r, adjusted_test=test, adjusted_n_bad=ve["n_bad"] if ve else 0,
                               adjusted_n_control=ve["n_control"] if ve else 0))
            continue
        diff = ve["diff"]
        if r.kind == "categorical":
            sb = float(np.mean(x[ok][bad[ok]]))
            eff = cohens_h(sb, min(1.0, max(0.0, sb - diff)))
        else:
            b, c = x[ok & bad], x[ok & ~bad]
            sp = math.sqrt(((len(b) - 1) * b.var(ddof=1) + (len(c) - 1) * c.var(ddof=1))
                           / (len(b) + len(c) - 2)) if len(b) > 1 and len(c) > 1 else 0.0
            eff = diff / sp if sp > 0 else None
        pct = diff / abs(r.control_mean) * 100 if r.control_mean else None
        out.append(replace(r, adjusted_diff=diff, adjusted_diff_pct=pct,
                           adjusted_p_value=ve["p_value"], adjusted_d=eff,
                           adjusted_n_bad=ve["n_bad"], adjusted_n_control=ve["n_control"],
                           adjusted_test=test))
    idx = [i for i, r in enumerate(out) if r.adjusted_p_value is not None]
    if idx:
        q = stats.false_discovery_control([out[i].adjusted_p_value for i in idx], method="bh")
        for i, a in zip(idx, q):
            out[i] = replace(out[i], adjusted_p_adjusted=float(a))
    return out, covs


def holds_adjusted(row, direction: str | None, alpha: float, floor: float) -> bool:
    """Whether a row's difference survives the workload adjustment: adjusted BH p < alpha, the
    adjusted difference in `direction` ("higher" | "lower" | None: either) and |adjusted_d| at
    or above `floor` (a share: evidence.share_big of the badcases' share against it minus the
    adjusted difference)."""
    q, diff, eff = row.adjusted_p_adjusted, row.adjusted_diff, row.adjusted_d
    if q is None or diff is None or eff is None or q >= alpha or diff == 0:
        return False
    if direction is not None and (diff > 0) != (direction == "higher"):
        return False
    if row.kind == "categorical":
        from .evidence import share_big
        sb = row.bad_mean
        return sb is not None and share_big(sb, min(1.0, max(0.0, sb - diff)),
                                            row.adjusted_n_bad or 0, row.adjusted_n_control or 0,
                                            floor)
    return abs(eff) >= floor
