"""The statistics of the run comparison, each from scipy where scipy has it.

- diff_interval: a difference of one statistic between two runs' requests. Mean: Welch's t
  (scipy.stats.ttest_ind(equal_var=False) and its confidence_interval). Median and pNN: the
  percentile bootstrap of the difference of that percentile (independent samples,
  replicates()), p-value of the median from Mann-Whitney U (two-sided), none for the tails (a
  rank test does not test a P99). The Hodges-Lehmann shift (the median of every pairwise difference)
  is given beside the median with its distribution-free interval (the Mann-Whitney inversion).
- spread: run-to-run spread of one configuration's repeated runs as AIPerf's multi-run mode
  reports it (ai-dynamo/aiperf, aiperf/orchestrator/aggregation/confidence.py: mean, sample
  std, CV = std / mean, t-interval mean +- t(1 - alpha/2, n - 1) * std / sqrt(n)).
- beyond_noise: the change is larger than that spread (see its doc).
- wilson: Wilson score interval of a proportion; mcnemar_exact: the exact McNemar test
  (binomial test of the discordant pairs, two-sided: statsmodels' mcnemar(exact=True)), the
  paired test of two models' answers to the same items.
"""
from __future__ import annotations

import math

import numpy as np

ALPHA = 0.05
N_BOOT = 1000
MAX_HL = 1000   # per side: the Hodges-Lehmann shift takes n x m differences


def _q(stat: str) -> float | None:
    if stat == "median":
        return 50.0
    if stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit():
        return float(stat[1:])
    return None


def point(values: np.ndarray, stat: str) -> float | None:
    if not len(values):
        return None
    if stat == "mean":
        return float(np.mean(values))
    q = _q(stat)
    return None if q is None else float(np.percentile(values, q))


def diff_interval(a: np.ndarray, b: np.ndarray, stat: str, alpha: float = ALPHA,
                  seed: int = 0, reps: tuple | None = None) -> dict:
    """{ci_low, ci_high, p_value, method} of stat(b) - stat(a); nulls when a side has < 2.
    reps: each side's bootstrap replicates of the percentile (replicates()), when the caller
    keeps them (a run is in many pairs)."""
    from scipy import stats
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    out = {"ci_low": None, "ci_high": None, "p_value": None, "method": None}
    if len(a) < 2 or len(b) < 2:
        return out
    if stat == "mean":
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            d = float(b[0] - a[0])
            return {"ci_low": d, "ci_high": d, "p_value": None, "method": "welch"}
        t = stats.ttest_ind(b, a, equal_var=False)
        ci = t.confidence_interval(1 - alpha)
        return {"ci_low": float(ci.low), "ci_high": float(ci.high), "p_value": float(t.pvalue),
                "method": "welch"}
    q = _q(stat)
    if q is None:
        return out
    ra, rb = reps if reps is not None else (replicates(a, (q,), seed)[q],
                                            replicates(b, (q,), seed + 1)[q])
    lo, hi = np.percentile(rb - ra, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    out.update(ci_low=float(lo), ci_high=float(hi), method="bootstrap")
    if stat == "median":
        out["p_value"] = float(stats.mannwhitneyu(b, a, alternative="two-sided").pvalue)
        out["hodges_lehmann"] = hodges_lehmann(a, b, alpha)
    return out


def replicates(x: np.ndarray, qs, seed: int = 0, n_boot: int = N_BOOT) -> dict:
    """{q: n_boot bootstrap replicates of percentile_q(x)} (numpy's linear interpolation).
    The interval of a difference between two independent samples is the percentile interval
    of rep_b - rep_a (the two-sample percentile bootstrap, as scipy.stats.bootstrap(
    method="percentile") over independent samples; each sample resampled once for every q and
    every pair it is in, which a folder of 300 pairs needs)."""
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    n = len(x)
    rng = np.random.default_rng(seed)
    out: dict = {q: [] for q in qs}
    for k in range(0, n_boot, 250):  # bounded memory: 250 resamples at a time
        m = min(250, n_boot - k)
        srt = np.sort(x[rng.integers(0, n, size=(m, n))], axis=1)
        for q in qs:
            pos = q / 100 * (n - 1)
            lo = int(np.floor(pos))
            hi = min(lo + 1, n - 1)
            out[q].append(srt[:, lo] + (pos - lo) * (srt[:, hi] - srt[:, lo]))
    return {q: np.concatenate(v) for q, v in out.items()}


def hodges_lehmann(a: np.ndarray, b: np.ndarray, alpha: float = ALPHA) -> dict:
    """{shift, ci_low, ci_high}: the median of every difference b_j - a_i and its interval
    from the Mann-Whitney U distribution (normal approximation of its quantile, as R's
    wilcox.test(conf.int=TRUE) for large samples). Deterministic thinning past MAX_HL."""
    from scipy import stats
    a = np.sort(a)[:: max(1, len(a) // MAX_HL)]
    b = np.sort(b)[:: max(1, len(b) // MAX_HL)]
    d = np.subtract.outer(b, a).ravel()
    n, m = len(a), len(b)
    k = int(math.floor(n * m / 2 - stats.norm.ppf(1 - alpha / 2)
                       * math.sqrt(n * m * (n + m + 1) / 12)))
    k = min(max(k, 0), len(d) - 1)
    lo, hi = np.partition(d, [k, len(d) - 1 - k])[[k, len(d) - 1 - k]]
    return {"shift": float(np.median(d)), "ci_low": float(lo), "ci_high": float(hi)}


def spread(values) -> dict:
    """AIPerf multi-run statistics of one configuration's run values: {n, mean, std, cv,
    ci_low, ci_high} (std, cv and the interval None with fewer than two runs)."""
    from scipy import stats
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], float)
    n = len(v)
    if not n:
        return {"n": 0, "mean": None, "std": None, "cv": None, "ci_low": None, "ci_high": None}
    mean = float(v.mean())
    if n < 2:
        return {"n": 1, "mean": mean, "std": None, "cv": None, "ci_low": None, "ci_high": None}
    sd = float(v.std(ddof=1))
    h = float(stats.t.ppf(1 - ALPHA / 2, n - 1)) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "std": sd, "cv": sd / abs(mean) if mean else None,
            "ci_low": mean - h, "ci_high": mean + h}


def beyond_noise(a_runs, b_runs, alpha: float = ALPHA) -> tuple[bool | None, str]:
    """Whether B's runs differ from A's beyond run-to-run noise, and how it was judged.

    Two or more runs on each side: Welch's t on the run values (p < alpha). Repeats on one
    side only: B's (or A's) single value lies outside that side's 1 - alpha prediction interval
    for one more run (mean +- t * std * sqrt(1 + 1/n)). One run per side: None (the spread is
    unknown)."""
    from scipy import stats
    a = np.asarray([x for x in a_runs if x is not None], float)
    b = np.asarray([x for x in b_runs if x is not None], float)
    if len(a) >= 2 and len(b) >= 2:
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            return bool(a[0] != b[0]), "runs"
        return bool(stats.ttest_ind(b, a, equal_var=False).pvalue < alpha), "runs"
    for rep, one in ((a, b), (b, a)):
        if len(rep) >= 2 and len(one) == 1:
            sd = rep.std(ddof=1)
            h = stats.t.ppf(1 - alpha / 2, len(rep) - 1) * sd * math.sqrt(1 + 1 / len(rep))
            return bool(abs(one[0] - rep.mean()) > h), "prediction"
    return None, "unknown"


def wilson(k: int, n: int, alpha: float = ALPHA) -> list:
    """[k / n, low, high]: the Wilson score interval (statsmodels' proportion_confint
    method="wilson")."""
    from scipy import stats
    if not n:
        return [None, None, None]
    p = k / n
    z = float(stats.norm.ppf(1 - alpha / 2))
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return [p, max(0.0, mid - h), min(1.0, mid + h)]


def mcnemar_exact(b_only: int, a_only: int) -> float | None:
    """Two-sided exact McNemar p: binomial test of one discordant count among all, p = 1/2."""
    from scipy import stats
    n = a_only + b_only
    if not n:
        return None
    return float(stats.binomtest(a_only, n, 0.5, alternative="two-sided").pvalue)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, alpha: float = ALPHA, n_boot: int = 2000,
                     seed: int = 0) -> list:
    """[acc(b) - acc(a), low, high]: the percentile bootstrap of the accuracy difference over
    resampled items (both runs' answers of an item drawn together)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    n = len(a)
    if not n:
        return [None, None, None]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    d = (b[idx] - a[idx]).mean(axis=1)
    lo, hi = np.percentile(d, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return [float(b.mean() - a.mean()), float(lo), float(hi)]
