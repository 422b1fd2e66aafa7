"""The cheapest patch set at each added depth by enumerating every subset of student layers (additive costs)."""

from collections.abc import Sequence

import numpy as np


def brute_force(block_sizes: Sequence[int], delta: Sequence[float]) -> dict[int, float]:
    """min over patch sets S with Σ_{i∈S}(n_i − 1) = r of Σ_{i∈S} Δ_i, for every reachable r (all 2^M subsets)."""
    m = len(block_sizes)
    masks = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1).astype(float)
    depth = (masks @ (np.asarray(block_sizes, dtype=float) - 1.0)).astype(int)
    cost = masks @ np.asarray(delta, dtype=float)
    best = np.full(depth.max() + 1, np.inf)
    np.minimum.at(best, depth, cost)
    return {int(r): float(c) for r, c in enumerate(best) if np.isfinite(c)}
