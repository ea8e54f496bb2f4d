"""The what-if's logistic fit under quasi-separation: a penalty on the curvature columns only,
chosen by cross-validation (recomputed with scipy / scikit-learn), and an estimate that always
lies inside its interval with a warning that says why."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import whatif as W
from explorer.core.analysis.whatif import fits


def _design(n=600, seed=3):
    r = np.random.default_rng(seed)
    t = r.uniform(0, 1, n)
    X = np.column_stack([np.ones(n), (t - 0.5) / 0.29, ((t - 0.5) / 0.29) ** 2,
                         r.normal(size=n)])
    y = (r.uniform(size=n) < 1 / (1 + np.exp(-(-1 + 2.5 * X[:, 1])))).astype(float)
    return X, y


def test_masked_penalty_matches_a_direct_minimisation():
    """fit_logistic(ridge, penalised) maximises loglik - ridge/2 |beta[penalised]|^2: the same
    optimum scipy.optimize finds on that objective written out by hand."""
    from scipy.optimize import minimize

    X, y = _design()
    mask = fits.penalised_columns([1, 2, 1])
    assert mask.tolist() == [False, False, True, False]
    fit = fits.fit_logistic(X, y, ridge=5.0, penalised=mask)

    def nll(b):
        eta = X @ b
        return -(np.sum(y * eta - np.logaddexp(0, eta))) + 2.5 * np.sum((b * mask) ** 2)

    def grad(b):
        p = 1 / (1 + np.exp(-(X @ b)))
        return -(X.T @ (y - p)) + 5.0 * b * mask
    ref = minimize(nll, np.zeros(4), jac=grad, method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(fit.params, ref, atol=1e-6)
    # the unpenalised columns are not shrunk: the slope of a full-penalty fit is smaller
    full = fits.fit_logistic(X, y, ridge=5.0)
    assert abs(full.params[1]) < abs(fit.params[1])


def test_cross_validated_penalty_is_the_best_held_out_log_likelihood():
    """choose_ridge's scores are the summed held-out log-likelihoods of scikit-learn's
    StratifiedKFold folds, recomputed here from fits on each fold."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _design()
    mask = fits.penalised_columns([1, 2, 1])
    best, scores = fits.choose_ridge(X, y, mask, seed=0)
    folds = StratifiedKFold(fits.CV_FOLDS, shuffle=True, random_state=0).split(X, y)
    folds = list(folds)
    for r in fits.RIDGE_GRID:
        ll = 0.0
        for tr, te in folds:
            b = fits.fit_logistic(X[tr], y[tr], ridge=r, penalised=mask).params
            p = 1 / (1 + np.exp(-(X[te] @ b)))
            ll += float(np.sum(y[te] * np.log(p) + (1 - y[te]) * np.log(1 - p)))
        assert scores[r] == pytest.approx(ll, rel=1e-9)
    assert scores[best] == max(scores.values())


def test_perfect_separation_warns_and_keeps_the_estimate_inside_its_interval():
    """badcase = 1 exactly when the hit rate is below 0.3: no finite maximum-likelihood fit
    exists. The result says the fit was penalised (and how it was chosen), and the estimate
    lies inside its interval."""
    r = np.random.default_rng(11)
    n = 400
    w = r.gamma(4, 8, n)
    t = r.uniform(0, 1, n)
    y = (t < 0.3).astype(int)
    df = pd.DataFrame({"batch_size": w, "prompt_tokens": r.integers(100, 4000, n),
                       "kv_cache_hit_rate": t, "badcase": y,
                       "grp": np.where(y == 1, "bad", "control")})
    res = W.run_whatif(df, set_value=0.5, refute=False)
    assert res.ci_low <= res.estimate <= res.ci_high
    assert res.estimate < 0
    assert any("quasi-separation" in w and "cross-validation" in w for w in res.warnings)
