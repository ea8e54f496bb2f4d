"""The diagnosis's small-group permutation p-values (compare._mw_p, used by sla_diagnosis.causes
below 20 windows a group) recomputed with scipy.stats.permutation_test: the same statistic
(the rank sum of the violation windows over the pooled mid-ranks), two-sided as scipy defines
it; exact enumeration when the splits are few, else 9,999 seeded resamples (equal within the
Monte Carlo error)."""
import numpy as np
import pytest
from scipy import stats

from explorer.core.analysis.sla_diagnosis import diagnose
from explorer.core.analysis.sla_features import window_features
from explorer.core.analysis.sla_diagnosis import in_periods
from explorer.demo import sla_collapse as sc
from explorer.core.store import Store


def _rank_sum(x, y, axis=-1):
    pooled = np.concatenate([x, y], axis=axis)
    return stats.rankdata(pooled, axis=axis)[..., :x.shape[axis]].sum(axis=axis)


def _groups(store, d):
    w = d.windows
    f = window_features(store, w.frame, w.params["window_s"])
    f = f.assign(met=in_periods(f, w.periods))
    j = f[f["met"].isin([True, False])]
    return j[j["met"] == False], j[j["met"] == True]  # noqa: E712


def _check(store, exact):
    d = diagnose(store, whatif=False)
    bad, ok = _groups(store, d)
    rows = [r for r in d.diagnosis["causes"] if r["test"] == "mann-whitney-u (permutation)"]
    assert rows
    for r in rows:
        b = bad[r["metric"]].to_numpy(float)
        c = ok[r["metric"]].to_numpy(float)
        b, c = b[np.isfinite(b)], c[np.isfinite(c)]
        # _mw_p permutes the smaller group's rank sum: the same p either way round
        res = stats.permutation_test((b, c), _rank_sum, permutation_type="independent",
                                     vectorized=True, alternative="two-sided",
                                     n_resamples=np.inf if exact else 9999, random_state=0)
        if exact:
            assert r["p_value"] == pytest.approx(res.pvalue, rel=1e-9, abs=1e-12), r["metric"]
        else:   # two independent Monte Carlo estimates of one p: 5 standard errors apart at most
            se = np.sqrt(max(res.pvalue, 1e-4) * (1 - min(res.pvalue, 0.999)) / 9999)
            assert abs(r["p_value"] - res.pvalue) <= 5 * np.sqrt(2) * se + 2e-4, r["metric"]
    return rows


def test_exact_enumeration_matches_scipy():
    """12 minutes with a 3-minute collapse: 3 violation windows against ~9 met ones, C(12, 3)
    = 220 splits, every one enumerated by both."""
    s = Store()
    sc.load(s, 0, True, minutes=12.0, collapse_at=6.0, collapse_minutes=3.0)
    rows = _check(s, exact=True)
    assert any(r["p_value"] < 0.05 for r in rows)
    s.close()


def test_seeded_resamples_match_scipy():
    """The default trace: 8 violation windows against ~28, C(36, 8) splits: 9,999 resamples."""
    s = Store()
    sc.load(s, 0, True)
    _check(s, exact=False)
    s.close()
