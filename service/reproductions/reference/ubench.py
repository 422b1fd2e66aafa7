"""The Friedman test and the Nemenyi critical difference from SciPy (``friedmanchisquare``, ``studentized_range``)."""

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import friedmanchisquare, rankdata, studentized_range


def friedman_nemenyi(scores: Sequence[Sequence[float]], alpha: float = 0.05) -> dict[str, object]:
    """Average ranks (rank 1 = highest score, ties averaged), Friedman χ² and p over the N datasets × k models, and
    CD = q_α √(k(k+1)/(6N)) with q_α = studentized_range.ppf(1 − α, k, ∞)/√2."""
    s = np.asarray(scores, dtype=float)
    n, k = s.shape
    ranks = np.vstack([rankdata(-row) for row in s]).mean(axis=0)
    chi2, p = friedmanchisquare(*s.T)
    q = studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return {
        "avg_ranks": ranks.tolist(),
        "chi2": float(chi2),
        "p": float(p),
        "cd": float(q * math.sqrt(k * (k + 1) / (6 * n))),
    }
