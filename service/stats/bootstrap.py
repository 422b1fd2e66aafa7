"""Seeded percentile bootstrap of a mean for graded metrics (budget B ≤ 10⁴, B·n ≤ 5·10⁷).

Three draws of the same bootstrap law, chosen by the data (each is *exactly* "resample n items with
replacement and average", only the random stream differs):
- two distinct values ``{a, b}`` (e.g. 0/1 scores): ``mean* = a + (b - a) · Binomial(n, p̂_b) / n``;
- few distinct values (``m ≤ n/32``, e.g. graded 0-5 judge scores): the counts of each value in a resample are
  ``Multinomial(n, counts/n)``, so ``mean* = counts* · values / n`` costs ``O(B·m)``;
- otherwise: resample item indices (``int32`` draws, chunks of ~256K indices), ``O(B·n)``.
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from service.errors import Degenerate, InvalidInput

MAX_RESAMPLES = 10_000
"""Largest accepted number of bootstrap resamples B."""
MAX_WORK = 50_000_000
"""Largest accepted B·n."""
_CHUNK = 1 << 18
"""Indices drawn per chunk: 256K keeps each buffer (1-2 MB) in the allocator's reused heap (measured fastest)."""


def check_budget(n_resamples: int, n: int, loc: Sequence[str | int] = ("params", "n_resamples")) -> None:
    """Raise :class:`InvalidInput` unless ``B ≤ 10 000`` and ``B·n ≤ 5·10⁷``."""
    if n_resamples > MAX_RESAMPLES:
        raise InvalidInput(f"n_resamples={n_resamples} exceeds the cap of {MAX_RESAMPLES}", loc)
    if n_resamples * n > MAX_WORK:
        raise InvalidInput(
            f"n_resamples·n = {n_resamples}·{n} exceeds the bootstrap budget of {MAX_WORK:.0e}; lower n_resamples",
            loc,
        )


def bootstrap_means(x: ArrayLike, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_resamples`` bootstrap replicates of ``mean(x)`` (module docstring for the three exact draws)."""
    data = np.asarray(x, dtype=np.float64).ravel()
    n = data.size
    if n == 0:
        raise Degenerate("cannot bootstrap an empty sample", ("x",))
    values, counts = np.unique(data, return_counts=True)
    if values.size == 1:
        return np.full(n_resamples, values[0])
    if values.size == 2:
        hits = rng.binomial(n, counts[1] / n, size=n_resamples)
        return values[0] + (values[1] - values[0]) * (hits / n)
    if values.size <= n // 32:
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        return (draws @ values) / n
    out = np.empty(n_resamples)
    rows = max(1, _CHUNK // n)
    dtype = np.int32 if n < 2**31 else np.int64
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=dtype)
        out[start:stop] = np.take(data, idx).sum(axis=1) / n
    return out


def percentile_interval(replicates: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval: the ``(1∓confidence)/2`` quantiles of the replicates (linear interpolation)."""
    alpha = 1.0 - confidence
    low, high = np.quantile(np.asarray(replicates, dtype=np.float64), [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def bootstrap_mean_ci(
    x: ArrayLike, n_resamples: int, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Seeded percentile bootstrap CI of a mean: ``(ci_low, ci_high, se)`` with ``se`` the replicate SD."""
    reps = bootstrap_means(x, n_resamples, np.random.default_rng(seed))
    low, high = percentile_interval(reps, confidence)
    return low, high, float(np.std(reps, ddof=1)) if reps.size > 1 else 0.0
