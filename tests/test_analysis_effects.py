"""Effect sizes that match the tests: Hedges' g, the rank-biserial correlation of the
Mann-Whitney test with DeLong's interval, permutation p-values for small groups, a minimum-n
note, and no numbers where a CI is undefined; recomputed by brute force / scipy."""
import itertools

import numpy as np
import pytest
from scipy import stats

from explorer.core.analysis.compare import (DEFAULTS, _mw_p, _numeric_row, _sorted, placements,
                                            rank_biserial)


def test_rank_biserial_is_the_mann_whitney_effect_with_delong_interval():
    """r = 2 U / (n1 n2) - 1 with U scipy's statistic; DeLong's variance from placement values
    counted pair by pair (ties half), here with ties."""
    r = np.random.default_rng(1)
    b = np.round(r.normal(1.0, 1, 40), 1)
    c = np.round(r.normal(0.4, 1, 70), 1)
    rb, lo, hi = rank_biserial(b, c)
    u = stats.mannwhitneyu(b, c).statistic
    assert rb == pytest.approx(2 * u / (len(b) * len(c)) - 1, rel=1e-12)
    pair = (b[:, None] > c[None, :]) + 0.5 * (b[:, None] == c[None, :])
    v10, v01 = pair.mean(axis=1), pair.mean(axis=0)
    a = pair.mean()
    se = np.sqrt(v10.var(ddof=1) / len(b) + v01.var(ddof=1) / len(c))
    z = stats.norm.ppf(0.975)
    assert lo == pytest.approx(2 * (a - z * se) - 1, rel=1e-10)
    assert hi == pytest.approx(2 * (a + z * se) - 1, rel=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_placements_are_the_pairwise_counts(seed):
    """V10 / V01 (searchsorted of each sorted group in the other) equal the pair-by-pair
    counts, ties half, in the groups' own order: small samples with many ties, one group
    constant, a group of one."""
    r = np.random.default_rng(seed)
    nb, nc = [(7, 11), (2, 30), (25, 3), (1, 9), (12, 12), (40, 55)][seed]
    b = r.integers(0, 5, nb).astype(float)
    c = r.integers(1, 6, nc).astype(float) if seed != 4 else np.full(nc, 2.0)
    v10, v01 = placements(b, c)
    pair = (b[:, None] > c[None, :]) + 0.5 * (b[:, None] == c[None, :])
    np.testing.assert_allclose(v10, pair.mean(axis=1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(v01, pair.mean(axis=0), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("decimals", [0, 1, 3, None])
def test_placements_equal_the_mid_rank_differences_on_large_groups(decimals):
    """On 3,000 against 40,000 values (rounded: ties) the placements are the mid-rank
    differences (pooled rank minus rank within the group, scipy.stats.rankdata), bit for bit,
    so the rank-biserial and its interval are those of four rankings; A sums to scipy's U; the
    p-value of each group sorted is the p of the groups as given."""
    r = np.random.default_rng(11)
    b, c = r.normal(0.2, 1, 3000), r.normal(0, 1, 40000)
    if decimals is not None:
        b, c = np.round(b, decimals), np.round(c, decimals)
    nb, nc = len(b), len(c)
    ranks = stats.rankdata(np.concatenate([b, c]))
    old10 = (ranks[:nb] - stats.rankdata(b)) / nc
    old01 = 1 - (ranks[nb:] - stats.rankdata(c)) / nb
    v10, v01 = placements(b, c)
    np.testing.assert_array_equal(v10, old10)
    np.testing.assert_array_equal(v01, old01)
    u = stats.mannwhitneyu(b, c).statistic
    assert v10.sum() * nc == pytest.approx(u, rel=1e-12)
    a = old10.mean()
    se = np.sqrt(old10.var(ddof=1) / nb + old01.var(ddof=1) / nc)
    z = stats.norm.ppf(0.975)
    assert rank_biserial(b, c) == (2 * a - 1, 2 * (a - z * se) - 1, 2 * (a + z * se) - 1)
    assert rank_biserial(b, c, order=_sorted(b, c)) == rank_biserial(b, c)
    p = stats.mannwhitneyu(b, c, alternative="two-sided").pvalue
    assert _mw_p(b, c, order=_sorted(b, c)) == (p, "mann-whitney-u")


def test_delong_interval_covers_the_true_effect_about_95_percent():
    """Normal groups shifted by delta: the true A = Phi(delta / sqrt 2); over 300 seeded
    samples the interval covers 2 A - 1 in about 95% of them."""
    delta = 0.5
    truth = 2 * stats.norm.cdf(delta / np.sqrt(2)) - 1
    r = np.random.default_rng(7)
    cover = 0
    for _ in range(300):
        _, lo, hi = rank_biserial(r.normal(delta, 1, 40), r.normal(0, 1, 60))
        cover += lo <= truth <= hi
    assert 0.91 <= cover / 300 <= 0.985, cover


def test_hedges_g_and_the_welch_interval():
    r = np.random.default_rng(2)
    b, c = r.normal(12, 3, 25), r.normal(10, 3, 40)
    row = _numeric_row("tpot_ms", b, c, DEFAULTS)
    sp = np.sqrt(((24) * b.var(ddof=1) + 39 * c.var(ddof=1)) / 63)
    d = (b.mean() - c.mean()) / sp
    assert row.cohens_d == pytest.approx(d)
    assert row.hedges_g == pytest.approx(d * (1 - 3 / (4 * 65 - 9)))
    ci = stats.ttest_ind(b, c, equal_var=False).confidence_interval(0.95)
    assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))
    assert row.test == "mann-whitney-u" and row.reason is None


def test_small_group_gets_an_exact_permutation_p_and_a_minimum_n_note():
    """4 badcases (with ties) against 6 controls: 210 splits, enumerated here; the row's p is
    twice the smaller one-sided share of splits (U at least / at most the observed one), as
    permutation tests double a one-sided p."""
    b = np.array([5.0, 7.0, 7.0, 9.0])
    c = np.array([1.0, 2.0, 5.0, 3.0, 7.0, 2.0])
    row = _numeric_row("queue_ms", b, c, DEFAULTS)
    x = np.concatenate([b, c])
    u_obs = stats.mannwhitneyu(b, c).statistic
    ge = le = total = 0
    for idx in itertools.combinations(range(len(x)), len(b)):
        rest = np.delete(x, idx)
        u = stats.mannwhitneyu(x[list(idx)], rest).statistic
        ge += u >= u_obs - 1e-9
        le += u <= u_obs + 1e-9
        total += 1
    assert total == 210
    assert row.p_value == pytest.approx(min(1.0, 2 * min(ge, le) / total), rel=1e-9)
    assert row.test == "mann-whitney-u (permutation)"
    assert "only 4 badcases with a value: too few to say anything" in row.reason


def test_undefined_ci_prints_no_numbers():
    """Both groups constant (different values): Cohen's d and the CI are undefined, so they
    are None, and the report writes "–" (fmt.MISSING), never [-1.0, -1.0]; the rank-biserial r is -1 (every
    badcase lower), its DeLong interval undefined (zero variance), so no interval either."""
    from explorer.core.report import _md_comparison
    row = _numeric_row("tpot_ms", np.array([1.0] * 12), np.array([2.0] * 15), DEFAULTS)
    assert row.cohens_d is None and row.ci_low is None and row.ci_high is None
    assert "CI undefined" in row.reason
    text = _md_comparison([row.to_dict()])
    assert row.rank_biserial == -1.0 and row.rank_biserial_ci_low is None
    cells = text.splitlines()[2].split(" | ")
    assert cells[-2] == "–" and "[" not in text.splitlines()[2]


def test_permutation_p_by_random_splits_matches_the_exact_distribution():
    """5 badcases against 400 controls (too many splits to enumerate), no ties: the seeded
    random-split p agrees with scipy's exact Mann-Whitney p within Monte Carlo error."""
    r = np.random.default_rng(5)
    b, c = r.normal(0.9, 1, 5), r.normal(0, 1, 400)
    row = _numeric_row("ttft_ms", b, c, DEFAULTS)
    exact = stats.mannwhitneyu(b, c, method="exact").pvalue
    assert row.test == "mann-whitney-u (permutation)"
    assert row.p_value == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 9999) + 2e-4)
