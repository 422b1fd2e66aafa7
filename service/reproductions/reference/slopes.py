"""Log-log slopes of runtimes against n: the OLS slope of a curve and its standard error from per-n means."""

from collections.abc import Sequence

import numpy as np


def _weights(ns: Sequence[int]) -> np.ndarray:
    x = np.log(np.asarray(ns, dtype=float))
    return (x - x.mean()) / np.sum((x - x.mean()) ** 2)


def fitted_slope(ns: Sequence[int], means: Sequence[float], ses: Sequence[float]) -> tuple[float, float]:
    """OLS slope b = Σ w_i ln m_i (w_i = (x_i − x̄)/S_xx, x = ln n) and its delta-method standard error
    sqrt(Σ w_i² (se_i/m_i)²) from the standard errors of the per-n means (independent replicates per n)."""
    w = _weights(ns)
    m, se = np.asarray(means, dtype=float), np.asarray(ses, dtype=float)
    return float(w @ np.log(m)), float(np.sqrt(np.sum(w**2 * (se / m) ** 2)))


def curve_slope(ns: Sequence[int], log_n_power: float, log_log_power: float) -> float:
    """The OLS log-log slope over the grid of n^a (ln n)^b: 2 for n², above 2 on finite grids for n² ln n."""
    x = np.log(np.asarray(ns, dtype=float))
    return float(_weights(ns) @ (log_n_power * x + log_log_power * np.log(x)))
