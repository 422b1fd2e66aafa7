"""Proportion intervals and standard errors."""

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from service.errors import Degenerate


def z_value(confidence: float) -> float:
    """Two-sided normal quantile: ``z`` with ``P(|Z| <= z) = confidence`` (1.959964 at 0.95).

    Computed from the lower tail, ``-Φ⁻¹((1 - c)/2)``: ``Φ⁻¹(0.5 + c/2)`` rounds to ``Φ⁻¹(1) = inf`` for c within
    1e-16 of 1 (e.g. c = 0.9999999999999999), which made every interval NaN."""
    if not 0.0 < confidence < 1.0:
        raise Degenerate("confidence must lie strictly between 0 and 1", ("confidence",))
    return float(-ndtri((1.0 - confidence) / 2.0))


def wilson_interval(k: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes out of ``n`` (Wilson 1927), clamped to [0, 1]; vectorised.

    ``center = (p + z²/2n) / (1 + z²/n)``, ``half = z/(1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)``.
    Clamping matters at the boundary: 10/10 gives an upper end of 0.99999999… in floating point.
    """
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr <= 0):
        raise Degenerate("Wilson interval needs n >= 1", ("n",))
    if np.any((k_arr < 0) | (k_arr > n_arr)):
        raise Degenerate("Wilson interval needs 0 <= k <= n", ("k",))
    z = z_value(confidence)
    z2 = z * z
    p = k_arr / n_arr
    denom = 1.0 + z2 / n_arr
    center = (p + z2 / (2.0 * n_arr)) / denom
    half = (z / denom) * np.sqrt(p * (1.0 - p) / n_arr + z2 / (4.0 * n_arr * n_arr))
    low = np.clip(center - half, 0.0, 1.0)
    high = np.clip(center + half, 0.0, 1.0)
    low = np.where(k_arr == 0, 0.0, low)
    high = np.where(k_arr == n_arr, 1.0, high)
    return low, high


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Scalar :func:`wilson_interval`."""
    low, high = wilson_interval(k, n, confidence)
    return float(low), float(high)


def binomial_se(k: ArrayLike, n: ArrayLike) -> np.ndarray:
    """Binomial standard error ``sqrt(p(1-p)/n)`` of a proportion (the iid form for 0/1 items)."""
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr <= 0):
        raise Degenerate("standard error needs n >= 1", ("n",))
    p = np.asarray(k, dtype=np.float64) / n_arr
    return np.sqrt(p * (1.0 - p) / n_arr)


def mean_stderr(x: ArrayLike) -> float:
    """lm-evaluation-harness ``mean_stderr``: ``sd(ddof=1)/sqrt(n)`` (seven 1s and three 0s give 0.152753)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.size < 2:
        raise Degenerate("mean_stderr needs at least 2 values", ("x",))
    return float(np.std(arr, ddof=1) / np.sqrt(arr.size))
