"""Minner estimators of |X ∩ Y| from the query X and the MinHash sketch of Y (Ahle, spec (a) a.1 "Minner").

Per hash k: r_k = min_{y in Y} h_k(y) (stored), c_k = [r_k in h_k(X)] (the argmin of Y lies in X), m_k =
#{x in X : h_k(x) < r_k}. C = sum c_k, M = sum m_k, R = sum r_k, where r_k is also the rank of the minimum in
the universe of size u (h_k is a bijection of [u]; u = D, or 2^64 for the hashed universe).
"""

from dataclasses import dataclass

import numpy as np

from service.errors import InvalidInput
from service.registry import Progress, no_progress


@dataclass(frozen=True)
class MinnerObservation:
    """Sufficient data of one query against one stored sketch."""

    collided: np.ndarray
    minner: np.ndarray
    ranks: np.ndarray
    n_x: int
    n_y: int
    universe: int

    @property
    def k(self) -> int:
        return len(self.collided)

    @property
    def c(self) -> int:
        return int(self.collided.sum())

    @property
    def m(self) -> int:
        return int(self.minner.sum())


def minner(obs: MinnerObservation, progress: Progress = no_progress) -> float:
    """T_v = min{C n_x/(C+M), C n_y/K}; 0 when C = 0 (CONFIRMED, Ahle §"Minner Estimator")."""
    c, m = obs.c, obs.m
    if c == 0:
        return 0.0
    return min(c * obs.n_x / (c + m), c * obs.n_y / obs.k)


def _score(obs: MinnerObservation, v: float, r_sum: float) -> tuple[float, float]:
    """l'(v) = -(K-C)/(n_y-v) - M/(n_x-v) + C/v + (R-M)/(u-n_x-n_y+v) and S(v) = -l''(v) (terms with a zero
    coefficient are dropped, so the endpoints are handled)."""
    k, c, m = obs.k, obs.c, obs.m
    terms = (
        (-(k - c), obs.n_y - v),
        (-m, obs.n_x - v),
        (c, v),
        (r_sum - m, float(obs.universe - obs.n_x - obs.n_y) + v),
    )
    score = sum(coef / den for coef, den in terms if coef != 0)
    slope = sum(abs(coef) / den**2 for coef, den in terms if coef != 0)
    return score, slope


def minner_newton(obs: MinnerObservation, progress: Progress = no_progress, max_iter: int = 200) -> float:
    """Root of the MLE score equation (spec a.1 "minner_newton"), by Newton from the Minner estimate.

    The score l'(v) is strictly decreasing on (lo, hi) = (max(0, n_x+n_y-u), min(n_x, n_y)), so the root is
    unique; Newton steps v <- v + l'(v)/S(v) are safeguarded by bisection on the sign bracket and iterated to
    convergence (|step| <= 1e-12 max(1, v)). C = 0 gives 0; a score still positive at hi gives hi.
    """
    if obs.c == 0:
        return 0.0
    r_sum = float(obs.ranks.sum())
    lo = float(max(0, obs.n_x + obs.n_y - obs.universe))
    hi = float(min(obs.n_x, obs.n_y))
    eps = 1e-9 * max(1.0, hi)
    if hi - lo <= 2 * eps or _score(obs, hi - eps, r_sum)[0] >= 0:
        return hi
    a, b = lo, hi
    v = min(max(minner(obs), lo + eps), hi - eps)
    for _ in range(max_iter):
        score, slope = _score(obs, v, r_sum)
        if score > 0:
            a = v
        else:
            b = v
        new = v + score / slope
        if not a < new < b:
            new = 0.5 * (a + b)
        if abs(new - v) <= 1e-12 * max(1.0, v):
            return new
        v = new
    return v


def mle_cost(n_x: int, n_y: int, k: int) -> int:
    """Work of :func:`mle`: K x (min(n_x, n_y) + 1) log-likelihood increments."""
    return k * (min(n_x, n_y) + 1)


def mle(obs: MinnerObservation, progress: Progress = no_progress, chunk: int = 1 << 22) -> float:
    """Integer argmax of the exact log-likelihood sum_k l(r_k; v) (CONFIRMED, Ahle §"Maximum Likelihood").

    Uses the closed-form increments l(v+1) - l(v) per hash (ratios of binomials), grouped over equal m_k, with
    the rank term -log(1 - (r_k - m_k)/L(v)), L(v) = u - n_x - n_y + v + 1, computed through log1p so it stays
    exact for u = 2^64. Ties go to the smallest v. O(K (min(n_x, n_y) + 1)).
    """
    k, c = obs.k, obs.c
    n_x, n_y, u = obs.n_x, obs.n_y, obs.universe
    m_k = obs.minner
    ranks_int = [int(r) for r in obs.ranks]
    lo = max([0, int(c > 0)] + [n_x + n_y - int(m) + r - u for m, r in zip(m_k, ranks_int, strict=True)])
    hi = min(n_x, n_y, n_x - int(m_k.max()), n_y - int(c < k))
    if lo > hi:
        raise InvalidInput(
            "the query and the stored sketch are inconsistent with stored_size (no feasible intersection)",
            loc=("stored_size",),
        )
    if lo == hi:
        return float(lo)
    v = np.arange(lo, hi, dtype=np.float64)
    m_vals, m_counts = np.unique(m_k, return_counts=True)
    inc = -k * np.log(n_x - v)
    for mv, cnt in zip(m_vals, m_counts, strict=True):
        inc += cnt * np.log(n_x - mv - v)
    if c > 0:
        inc += c * (np.log(v + 1) - np.log(v))
    if c < k:
        inc += (k - c) * (np.log(n_y - v - 1) - np.log(n_y - v))
    excess = obs.ranks.astype(np.float64) - m_k
    above = np.array([float(u - r) for r in ranks_int]) + m_k
    base = float(u - n_x - n_y) + 1.0
    step = max(1, chunk // k)
    for s0 in range(0, len(v), step):
        lv = base + v[s0 : s0 + step]
        frac = excess[:, None] / lv[None, :]
        far = frac > 0.5
        term = -np.log1p(-np.where(far, 0.0, frac))
        if far.any():
            gk = above[:, None] - float(n_x + n_y) + v[None, s0 : s0 + step] + 1.0
            term = np.where(far, np.log(lv)[None, :] - np.log(np.where(far, gk, 1.0)), term)
        inc[s0 : s0 + step] += term.sum(axis=0)
        progress(min(1.0, (s0 + step) / len(v)), "maximum-likelihood scan")
    loglik = np.concatenate([[0.0], np.cumsum(inc)])
    return float(lo + int(np.argmax(loglik)))


ESTIMATORS = {"minner": minner, "minner_newton": minner_newton, "mle": mle}
