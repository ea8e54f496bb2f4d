"""The outcome model's regressions, in numpy: OLS (normal equations, classical covariance) and
logistic regression (Newton-Raphson with step halving, optional ridge penalty on chosen
columns, chosen by cross-validation), plus the BLAS
thread limit their callers run under.

Shapes: X (n x p) design matrix whose column 0 is the intercept, y (n,); a Fit holds params
(p,) and cov_params() (p x p). statsmodels gives the same numbers (OLS; GLM Binomial for
ridge=0), 10x slower when the refuters refit 30 times on 50k rows.
"""
from __future__ import annotations

import math

import numpy as np
from explorer.core.i18n import _


class Fit:
    """A fitted regression: params (p,), cov_params() (p x p), predict(X) (mean outcome).

    numpy instead of statsmodels: the refuters refit the model 30 times and statsmodels'
    SVD-based IRLS made that 10x slower on 50k rows."""

    def __init__(self, params, cov, logistic, iterations=1, converged=True, ridge=0.0,
                 penalised=None):
        self.params = params
        self._cov = cov
        self.logistic = logistic
        self.iterations = iterations
        self.converged = converged
        self.ridge = ridge
        self.penalised = penalised
        self.cv_scores: dict | None = None   # {penalty: held-out log-likelihood} if chosen

    def cov_params(self):
        return self._cov

    def predict(self, X):
        eta = X @ self.params
        return logistic(eta) if self.logistic else eta

    def summary(self) -> str:
        kind = _("logistic (Newton-Raphson)") if self.logistic else _("OLS")
        return _("{kind}: params {params}, {iterations} iterations").format(kind=kind, params=np.round(self.params, 4).tolist(), iterations=self.iterations)


def logistic(eta):
    """The inverse logit, clipped at |eta| = 35 (no overflow; exact to double precision)."""
    return 1.0 / (1.0 + np.exp(-np.clip(eta, -35, 35)))


def monotone_counterfactual(y, p_obs, p_new):
    """P(outcome = 1 under the new values) of cases with observed 0/1 outcome `y` (a column,
    broadcast over draws) under the monotone latent-threshold model: a case that failed fails
    with probability p_new / p_obs when p falls, one that did not fails with probability
    (p_new - p_obs) / (1 - p_obs) when p rises."""
    return np.where(p_new <= p_obs, y * p_new / np.maximum(p_obs, 1e-12),
                    y + (1 - y) * (p_new - p_obs) / np.maximum(1 - p_obs, 1e-12))


def _solve_spd(A, b):
    ridge = 1e-9 * (np.trace(A) / len(A) or 1.0)
    try:
        c = np.linalg.cholesky(A + ridge * np.eye(len(A)))
        return np.linalg.solve(c.T, np.linalg.solve(c, b))
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A) @ b


def fit_ols(X: np.ndarray, y: np.ndarray) -> Fit:
    """OLS by the normal equations; classical covariance s^2 (X'X)^-1."""
    XtX = X.T @ X
    beta = _solve_spd(XtX, X.T @ y)
    r = y - X @ beta
    s2 = float(r @ r) / max(1, len(y) - X.shape[1])
    return Fit(beta, s2 * _solve_spd(XtX, np.eye(X.shape[1])), logistic=False)


#: Candidate L2 penalties of the logistic fit when the unpenalised fit does not converge
#: (quasi-separation: a spline region without any badcase, seen on the demo workload), on the
#: CURVATURE columns only (see penalised_columns): the intercept and each variable's linear
#: column stay free, so the penalty bends the fitted curves towards straight lines instead of
#: pulling the effect towards zero. The one used is chosen by CV_FOLDS-fold cross-validated
#: log-likelihood (choose_ridge); the result says so. (A fixed penalty of 1 on every column,
#: used before, shrank the demo's effect about 12-fold: -0.015 against a planted -0.19.)
RIDGE_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
CV_FOLDS = 5


def penalised_columns(widths) -> np.ndarray:
    """Mask of the penalised columns of a design [intercept | block 1 | block 2 ...] whose
    block widths are `widths` (the intercept's block first, width 1): every column of a block
    but its first, which is the variable's standardised value (splines.spline_basis)."""
    mask = []
    for w in widths:
        mask += [False] + [True] * (int(w) - 1)
    return np.array(mask, dtype=bool)


def choose_ridge(X: np.ndarray, y: np.ndarray, penalised: np.ndarray | None = None,
                 seed: int = 0) -> tuple[float, dict]:
    """The RIDGE_GRID penalty with the best CV_FOLDS-fold cross-validated log-likelihood
    (sklearn StratifiedKFold, shuffled with `seed`; ties go to the larger penalty) and
    {penalty: held-out log-likelihood}."""
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(CV_FOLDS, shuffle=True, random_state=seed).split(X, y))
    scores = {}
    for r in RIDGE_GRID:
        ll = 0.0
        for tr, te in folds:
            b = fit_logistic(X[tr], y[tr], ridge=r, penalised=penalised).params
            eta = np.clip(X[te] @ b, -35, 35)
            ll += float(np.sum(y[te] * eta - np.logaddexp(0, eta)))
        scores[r] = ll
    best = max(RIDGE_GRID, key=lambda r: (scores[r], r))
    return best, scores


def ridge_warning(ridge: float, outcome: str) -> str:
    """The sentence a result gives when its logistic fit needed the penalty."""
    return _("Some range of the variables has (almost) no {outcome} = 1 or no {outcome} = 0 "
             "(quasi-separation), so the unpenalised logistic fit does not converge: the fit "
             "penalises the splines' curvature (L2, {ridge:g}, chosen by {folds}-fold "
             "cross-validation among {grid}), which bends the fitted curves towards straight "
             "lines; the slopes are not penalised.").format(
                 outcome=outcome, ridge=ridge, folds=CV_FOLDS,
                 grid=", ".join(f"{r:g}" for r in RIDGE_GRID))


def fit_logistic_auto(X: np.ndarray, y: np.ndarray, start=None, ridge: float | None = None,
                      penalised: np.ndarray | None = None, seed: int = 0) -> Fit:
    """Unpenalised fit; when it does not converge (quasi-separation), the fit with the
    cross-validated penalty (choose_ridge) on the `penalised` columns. ridge given: use it
    directly (the refuters refit with the penalty the original estimate needed)."""
    if ridge is not None:
        return fit_logistic(X, y, start=start, ridge=ridge, penalised=penalised)
    fit = fit_logistic(X, y, start=start, ridge=0.0)
    if fit.converged:
        return fit
    best, scores = choose_ridge(X, y, penalised, seed)
    out = fit_logistic(X, y, ridge=best, penalised=penalised)
    out.cv_scores = scores
    return out


def fit_logistic(X: np.ndarray, y: np.ndarray, max_iter: int = 50, tol: float = 1e-9,
                 start: np.ndarray | None = None, ridge: float = 0.0,
                 penalised: np.ndarray | None = None) -> Fit:
    """Logistic regression by Newton-Raphson with step halving, maximising the log-likelihood
    minus ridge/2 * |beta[penalised]|^2 (penalised: bool mask, default every column but the
    intercept; ridge=0: the plain maximum-likelihood fit statsmodels' GLM
    Binomial gives); covariance = inverse penalised Fisher information (X'WX + ridge I)^-1.
    start: initial coefficients (default: intercept at the logit of the mean outcome)."""
    p_ = X.shape[1]
    pen = np.full(p_, float(ridge))
    if penalised is not None:
        pen = np.where(np.asarray(penalised, dtype=bool), pen, 0.0)
    pen[0] = 0.0                                  # X[:, 0] is the intercept
    beta = np.zeros(p_)
    p0 = min(max(float(np.mean(y)), 1e-6), 1 - 1e-6)
    beta[0] = math.log(p0 / (1 - p0))
    if start is not None and len(start) == p_:
        beta = np.array(start, dtype=float)

    def objective(b):
        eta = np.clip(X @ b, -35, 35)
        return float(np.sum(y * eta - np.logaddexp(0, eta))) - 0.5 * float(pen @ (b * b))

    ll = objective(beta)
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        eta = np.clip(X @ beta, -35, 35)
        p = 1.0 / (1.0 + np.exp(-eta))
        w = np.maximum(p * (1 - p), 1e-10)
        step = _solve_spd(X.T @ (X * w[:, None]) + np.diag(pen), X.T @ (y - p) - pen * beta)
        t = 1.0
        while t > 1e-4:
            nb = beta + t * step
            nll = objective(nb)
            if nll >= ll - 1e-12:
                break
            t /= 2
        beta, delta, ll = nb, nll - ll, nll
        if abs(delta) < tol * (abs(ll) + 1):
            converged = True
            break
    p = 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -35, 35)))
    w = np.maximum(p * (1 - p), 1e-10)
    cov = _solve_spd(X.T @ (X * w[:, None]) + np.diag(pen), np.eye(p_))
    return Fit(beta, cov, logistic=True, iterations=it, converged=converged, ridge=float(ridge),
               penalised=penalised)


def one_blas_thread():
    """Context limiting BLAS to one thread: the Gram matrices here are tiny (p ~ 20) and a
    multi-threaded OpenBLAS on a loaded machine made each one 200x slower (0.8 s vs 3.5 ms for
    50k x 17, measured)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")
