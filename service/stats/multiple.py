"""Holm step-down adjustment of p-values (per-category tests against chance)."""

import numpy as np
from numpy.typing import ArrayLike


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm-adjusted p-values: ``p̃_(i) = max_{j ≤ i} min(1, (m - j + 1) p_(j))`` in ascending order."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted
