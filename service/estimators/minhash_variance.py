"""Variance of C-MinHash-(sigma, pi) and the approximate MSE of the Minner estimator (spec (a), a.1).

Both rest on the run structure of a uniformly placed set on the circle ``Z_D``: for a set of size ``f`` the
number ``g`` of maximal runs (equivalently of gaps) has
``P(g) = (D/g) C(f-1, g-1) C(c-1, g-1) / C(D, f)``, ``g = 1..min(f, c)``, ``c = D - f`` (``g = 0`` when ``c = 0``).
The weights are built from the ratio ``P(g+1)/P(g) = (f-g)(c-g) / (g(g+1))`` in log space and normalised by a
streaming log-sum-exp, so the sum is exact in O(min(f, D-f)) time for any ``D`` (also ``D = 2^64``).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from service.registry import Progress, no_progress

_CHUNK = 1 << 20


def run_expectations(
    f: int,
    d: float,
    funcs: list[Callable[[np.ndarray], np.ndarray]],
    progress: Progress = no_progress,
) -> list[float]:
    """``E_g[func(g)]`` for each func, g = number of runs of a uniform ``f``-subset of ``Z_D`` (module doc)."""
    c = d - f
    if c <= 0:
        zero = np.zeros(1)
        return [float(fn(zero)[0]) for fn in funcs]
    g_max = int(min(f, c))
    log_carry, top = 0.0, -np.inf
    total, sums = 0.0, np.zeros(len(funcs))
    for g0 in range(1, g_max + 1, _CHUNK):
        g = np.arange(g0, min(g0 + _CHUNK, g_max + 1), dtype=np.float64)
        with np.errstate(divide="ignore"):
            inc = np.log(f - g) + np.log(c - g) - np.log(g) - np.log(g + 1)
        logw = np.empty_like(g)
        logw[0] = log_carry
        np.cumsum(inc[:-1], out=logw[1:])
        logw[1:] += log_carry
        log_carry = float(logw[-1] + inc[-1]) if g[-1] < g_max else 0.0
        new_top = max(top, float(logw.max()))
        scale = np.exp(top - new_top) if np.isfinite(top) else 0.0
        top = new_top
        w = np.exp(logw - top)
        total = total * scale + float(w.sum())
        sums = sums * scale + np.array([float(np.dot(w, fn(g))) for fn in funcs])
        progress(min(1.0, float(g[-1]) / g_max), f"run-count sum {int(g[-1])}/{g_max}")
    return [float(s / total) for s in sums]


def cminhash_ratio(f: int, d: float, k: int) -> float:
    """Exact Var[J_hat_{sigma,pi}] / (J(1-J)/K) = 1 - (K-1)/(f-1) E_g[(f-g)/(f+g)] (RECONSTRUCTED, spec a.1)."""
    if k == 1:
        return 1.0
    (e,) = run_expectations(f, d, [lambda g: (f - g) / (f + g)])
    return 1.0 - (k - 1) / (f - 1) * e


def cminhash_ratio_approx(f: int, d: float, k: int) -> float:
    """Explicit approximation 1 - (K-1)/(2D - f - 1) of :func:`cminhash_ratio` (RECONSTRUCTED, spec a.1)."""
    return 1.0 - (k - 1) / (2.0 * d - f - 1.0)


def smallest_prime_factor_below(d: int, bound: int) -> int | None:
    """Smallest prime factor p of ``d`` with ``p <= bound``, or None (trial division up to ``bound``)."""
    for p in range(2, min(bound, d) + 1):
        if d % p == 0:
            return p
    return None


def circulant_warning(d: int | None, k: int) -> str | None:
    """Warning when some lag s <= K-1 shares a factor with D: the exact formulas then only approximate."""
    if d is None:
        return None
    p = smallest_prime_factor_below(d, k - 1)
    if p is None:
        return None
    return (
        f"universe D={d} is not prime and num_perm-1={k - 1} reaches its smallest prime factor {p}: "
        "circulant lags sharing a factor with D make the C-MinHash variance formulas approximate "
        "(choose a prime D for exactness)"
    )


@dataclass(frozen=True)
class MinnerMoments:
    """First two moments of the per-hash pair (c, m) of Minner and of their K-hash means (C/K, M/K)."""

    mu: np.ndarray
    sigma0: np.ndarray
    sigma1: np.ndarray
    cov_mean: np.ndarray


def minner_moments(n_x: int, n_y: int, v: int, d: float, k: int, progress: Progress = no_progress) -> MinnerMoments:
    """Moments of (c, m) under C-MinHash-(sigma, pi) hashing (RECONSTRUCTED, spec a.1 "Approximate variance").

    Single hash (classical): mu_c = v/n_y, mu_m = (n_x-v)/(n_y+1), Var c = mu_c(1-mu_c), Var m negative
    hypergeometric, Cov(c, m) = 0. Cross-hash covariance ``sigma1`` of two circulant hashes at a lag coprime to D,
    in closed form (derived here, checked against exhaustive enumeration in the tests):
    * [c, c]: the C-MinHash derivation with f := n_y, a := v: -mu_c(1-mu_c)/(n_y-1) E_g[(n_y-g)/(n_y+g)].
    * [c, m] = 0 exactly: which points of Y are also in X is a uniform labelling independent of everything m
      depends on (the placement of Y and of X-only points and pi), so E[c_j | m_k] = v/n_y.
    * [m, m]: m_j m_{j+1} is a sum over pairs of X-only points of order-statistics events whose probabilities
      depend only on g (runs of Y) and on whether each point is adjacent to a Y-run; the adjacency counts have
      closed-form means given g (X-only labels are uniform on the complement of Y, gaps are a uniform
      composition), giving E[m_j m_{j+1}] = E_g[...] below.
    ``Cov(C/K, M/K) = (sigma0 + (K-1) sigma1)/K``.
    """
    n_xo = n_x - v
    c_y = d - n_y
    mu_c, mu_m = v / n_y, n_xo / (n_y + 1)
    var_m = n_xo / (n_y + 1) + 2.0 * n_xo * (n_xo - 1) / ((n_y + 1) * (n_y + 2)) - mu_m**2
    sigma0 = np.array([[mu_c * (1 - mu_c), 0.0], [0.0, var_m]])
    q1 = n_xo / c_y if c_y > 0 else 0.0
    q2 = n_xo * (n_xo - 1) / (c_y * (c_y - 1)) if c_y > 1 else 0.0

    def cc(g: np.ndarray) -> np.ndarray:
        return (n_y - g) / (n_y + g)

    def mm(g: np.ndarray) -> np.ndarray:
        ones = g * (g - 1) / (c_y - 1) if c_y > 1 else g
        edge = g * q1
        same = (c_y - g) * q2
        both = (g * g - ones) * q2 + ones * q1
        return (
            same / (n_y + g + 1)
            + (n_xo**2 - 2 * n_xo * edge + both - same) * 2.0 / ((n_y + 1) * (n_y + g + 2))
            + (2 * n_xo * edge - 2 * both) / ((n_y + 1) * (n_y + g + 1))
        )

    e_cc, e_mm = run_expectations(n_y, d, [cc, mm], progress)
    s_cc = -mu_c * (1 - mu_c) / (n_y - 1) * e_cc if n_y > 1 else 0.0
    s_mm = e_mm - mu_m**2 if n_xo > 0 else 0.0
    sigma1 = np.array([[s_cc, 0.0], [0.0, s_mm]])
    return MinnerMoments(
        mu=np.array([mu_c, mu_m]), sigma0=sigma0, sigma1=sigma1, cov_mean=(sigma0 + (k - 1) * sigma1) / k
    )


@dataclass(frozen=True)
class MinnerApprox:
    """Delta-method + Clark approximation of the Minner intersection and Jaccard estimators."""

    mean_intersection: float
    mse_intersection: float
    mse_jaccard: float


def clark_min(mu1: float, mu2: float, var1: float, var2: float, cov: float) -> tuple[float, float]:
    """Mean and variance of min(X1, X2) for a bivariate normal (Clark 1961)."""
    theta2 = var1 + var2 - 2 * cov
    if theta2 <= 1e-24 * max(1.0, var1 + var2):
        return (mu1, var1) if mu1 <= mu2 else (mu2, var2)
    theta = float(np.sqrt(theta2))
    alpha = (mu1 - mu2) / theta
    phi = float(np.exp(-0.5 * alpha * alpha) / np.sqrt(2 * np.pi))
    lo, hi = float(ndtr(-alpha)), float(ndtr(alpha))
    mean = mu1 * lo + mu2 * hi - theta * phi
    second = (mu1**2 + var1) * lo + (mu2**2 + var2) * hi - (mu1 + mu2) * theta * phi
    return mean, max(0.0, second - mean**2)


def minner_approx(n_x: int, n_y: int, v: int, mom: MinnerMoments) -> MinnerApprox:
    """MSE of T_v = min(n_x C/(C+M), n_y C/K) and of T_J = T_v/(n_x+n_y-T_v) (RECONSTRUCTED, spec a.1).

    Delta method on both branches at (mu_c, mu_m), Clark's moments of the minimum of the two (correlated)
    normal branches, MSE = Var + bias^2; Jaccard: Var scaled by (dJ/dv)^2 = ((n_x+n_y)/(n_x+n_y-v)^2)^2 and the
    bias mapped through J(t) = t/(n_x+n_y-t).
    """
    if v == 0:
        return MinnerApprox(0.0, 0.0, 0.0)
    mu_c, mu_m = mom.mu
    cov = mom.cov_mean
    grad1 = n_x * np.array([mu_m, -mu_c]) / (mu_c + mu_m) ** 2
    grad2 = np.array([float(n_y), 0.0])
    mean, var = clark_min(
        n_x * mu_c / (mu_c + mu_m),
        n_y * mu_c,
        float(grad1 @ cov @ grad1),
        float(grad2 @ cov @ grad2),
        float(grad1 @ cov @ grad2),
    )
    s = n_x + n_y
    slope = s / (s - v) ** 2
    jac_bias = mean / (s - mean) - v / (s - v)
    return MinnerApprox(mean, var + (mean - v) ** 2, slope**2 * var + jac_bias**2)
