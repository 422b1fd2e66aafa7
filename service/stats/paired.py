"""Paired comparison of two systems on the same items."""

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from service.errors import Degenerate
from service.stats.bootstrap import bootstrap_means, percentile_interval
from service.stats.tails import binom_two_sided


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar test: two-sided binomial test of ``b`` discordant pairs out of ``b + c`` at p = 1/2.

    b = 12, c = 4 gives p = 0.0768. No discordant pair gives p = 1.
    """
    if b < 0 or c < 0:
        raise Degenerate("discordant counts must be non-negative", ("b",))
    return binom_two_sided(int(b), int(b) + int(c), 0.5)


def mcnemar(a: ArrayLike, b: ArrayLike) -> dict[str, float | int]:
    """McNemar on paired 0/1 scores: ``b`` = #(a right, b wrong), ``c`` = #(a wrong, b right), exact p."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise Degenerate("paired scores must have the same length", ("b",))
    n10 = int(np.count_nonzero((x == 1) & (y == 0)))
    n01 = int(np.count_nonzero((x == 0) & (y == 1)))
    return {"b": n10, "c": n01, "p_value": mcnemar_exact(n10, n01)}


def paired_bootstrap(
    a: ArrayLike, b: ArrayLike, n_resamples: int, seed: int = 0, confidence: float = 0.95
) -> dict[str, float]:
    """Paired percentile bootstrap of ``mean(a - b)`` (items resampled jointly; seeded).

    ``p_value`` is the two-sided bootstrap achieved significance ``min(1, 2·min(P*(d ≤ 0), P*(d ≥ 0)))``
    (Koehn-style paired bootstrap).
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.size == 0:
        raise Degenerate("paired scores must be non-empty and of the same length", ("b",))
    d = x - y
    reps = bootstrap_means(d, n_resamples, np.random.default_rng(seed))
    low, high = percentile_interval(reps, confidence)
    p = min(1.0, 2.0 * min(float(np.mean(reps <= 0.0)), float(np.mean(reps >= 0.0))))
    return {
        "mean_diff": float(d.mean()),
        "ci_low": low,
        "ci_high": high,
        "se": float(np.std(reps, ddof=1)) if reps.size > 1 else 0.0,
        "p_value": p,
    }


def wilcoxon_signed_rank(a: ArrayLike, b: ArrayLike) -> dict[str, float | int]:
    """Two-sided Wilcoxon signed-rank test of the paired differences ``a − b`` (``scipy.stats.wilcoxon``: zero
    differences dropped, scipy's default choice between the exact null distribution and the normal approximation).

    Differences are rounded to 12 decimals so float noise neither splits ties nor hides a zero difference."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape or xa.size == 0:
        raise Degenerate("paired scores must be non-empty and of the same length", ("b",))
    d = np.round(xa - xb, 12)
    n_nonzero = int(np.count_nonzero(d))
    if n_nonzero == 0:
        raise Degenerate("every paired difference is zero: the signed-rank test is undefined", ("b",))
    res = stats.wilcoxon(d)
    return {
        "mean_diff": float(np.mean(xa - xb)),
        "statistic": float(res.statistic),
        "p_value": float(res.pvalue),
        "n_nonzero": n_nonzero,
    }
