"""Feature maps of the outcome model: a cubic regression spline basis (truncated power form,
continued linearly outside the data's range) and, per variable, the standardised basis fitted
on its observed values (spline_basis). Input x (n,) in the variable's own unit; output
(n x k), columns centred and scaled to unit SD."""
from __future__ import annotations

from typing import Callable

import numpy as np


def _cubic_spline(z: np.ndarray, k: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Cubic regression spline basis of z (truncated power form: z, z^2, z^3, (z - k_j)_+^3 for
    the interior knots k; Hastie, Tibshirani & Friedman, ESL 2nd ed., s. 5.2), continued
    linearly outside [lo, hi] (the data's range): B(z) = B(c) + B'(c) (z - c), c = clip(z)."""
    c = np.clip(z, lo, hi)
    out = np.empty((len(z), 3 + len(k)))
    c2 = c * c
    out[:, 0], out[:, 1], out[:, 2] = c, c2, c2 * c
    tails = []
    for j, kj in enumerate(k):
        m = np.maximum(c - kj, 0.0)
        tails.append(m)
        out[:, 3 + j] = m * m * m
    dz = z - c
    if dz.any():                                  # some z outside the range: extrapolate
        out[:, 0] += dz
        out[:, 1] += 2 * c * dz
        out[:, 2] += 3 * c2 * dz
        for j, m in enumerate(tails):
            out[:, 3 + j] += 3 * m * m * dz
    return out


def spline_basis(x: np.ndarray, n_knots: int,
                 ranks: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    """Feature map of one variable, fitted on x, for more than 5 distinct values:
    ranks=True (adjustment variables): the standardised value z plus a cubic regression spline
    of its empirical CDF u = F(x) (n_knots knots at u = 0, 1/(n_knots-1), ..., 1; on ranks, a
    long tail such as prompt_tokens up to 128k cannot make the basis ill-conditioned; beyond
    the observed range u stays at 0 or 1 and z continues linearly);
    ranks=False (the treatment, whose scale the scenario is set on): a cubic regression spline
    of z with knots at the quantiles linspace(0, 1, n_knots), linear beyond the observed range.
    With 3-5 distinct values: z and z^2; a 0/1 variable: z. Columns are centred and scaled to
    unit SD."""
    xs = np.sort(x[:: max(1, len(x) // 5_000)])     # ranks and scales from <= ~10k rows
    mu, sd = float(np.mean(xs)), float(np.std(xs)) or 1.0
    uniq = np.unique(xs)
    if len(uniq) > 5 and not ranks:
        q = (np.quantile(xs, np.linspace(0, 1, n_knots)) - mu) / sd
        lo, hi = float(q[0]), float(q[-1])
        knots = np.unique(q[1:-1])
        knots = knots[(knots > lo) & (knots < hi)]

        def raw(v):
            return _cubic_spline((np.asarray(v, dtype=float) - mu) / sd, knots, lo, hi)
    elif len(uniq) > 5:
        probs = np.linspace(0, 1, 201)
        qs = np.quantile(xs, probs)
        qs, first = np.unique(qs, return_index=True)
        ps = probs[first]
        inner = np.linspace(0, 1, n_knots)[1:-1]

        def raw(v):
            v = np.asarray(v, dtype=float)
            u = np.interp(v, qs, ps)
            return np.column_stack([(v - mu) / sd, _cubic_spline(u, inner, 0.0, 1.0)])
    elif len(uniq) > 2:
        def raw(v):
            z = (np.asarray(v, dtype=float) - mu) / sd
            return np.column_stack([z, z * z])
    else:
        def raw(v):
            return ((np.asarray(v, dtype=float) - mu) / sd)[:, None]
    b = raw(xs)
    cmu, csd = b.mean(axis=0), b.std(axis=0)
    csd[csd == 0] = 1.0
    return lambda v: (raw(v) - cmu) / csd
