"""Cluster-robust standard error of a mean and label factorisation."""

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from service.errors import Degenerate


def factorize(labels: Sequence[Hashable]) -> tuple[np.ndarray, list[Hashable]]:
    """Integer codes (first-appearance order) and the distinct labels, in one dict pass."""
    uniques = list(dict.fromkeys(labels))
    lookup = dict(zip(uniques, range(len(uniques)), strict=True))
    codes = np.fromiter(map(lookup.__getitem__, labels), dtype=np.int64, count=len(labels))
    return codes, uniques


def cluster_robust_se(values: ArrayLike, clusters: ArrayLike, n_clusters: int | None = None) -> float:
    """Cluster-robust (CR1-style) SE of the mean: ``sqrt(G/(G-1) · Σ_g (c_g - p̂ n_g)²) / N``.

    ``c_g`` is the sum of ``values`` in cluster ``g`` and ``n_g`` its size (e.g. films A, B, C with
    [1,1,0,1], [0,1,0,0], [1,1] give 0.21071). ``clusters`` are integer codes ``0..G-1``.
    """
    x = np.asarray(values, dtype=np.float64)
    g = np.asarray(clusters, dtype=np.int64)
    if x.shape != g.shape or x.ndim != 1 or x.size == 0:
        raise Degenerate("values and clusters must be equal-length non-empty vectors", ("clusters",))
    size = int(g.max()) + 1 if n_clusters is None else n_clusters
    sums = np.bincount(g, weights=x, minlength=size)
    sizes = np.bincount(g, minlength=size).astype(np.float64)
    present = sizes > 0
    n_groups = int(present.sum())
    if n_groups < 2:
        raise Degenerate("a cluster-robust SE needs at least 2 clusters", ("clusters",))
    p_hat = x.mean()
    resid = sums[present] - p_hat * sizes[present]
    return float(np.sqrt(n_groups / (n_groups - 1) * np.dot(resid, resid)) / x.size)
