"""Rank correlations: Spearman's ρ and the partial Spearman ρ given covariates, with Fisher-z standard errors."""

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata


def partial_spearman(x: Sequence[float], y: Sequence[float], covariates: Sequence[Sequence[float]]) -> float:
    """Pearson correlation of the ranks of x and y after each is regressed on the covariates' ranks (least squares
    with an intercept); with no covariate it is Spearman's ρ."""
    n = len(x)
    z = np.column_stack([np.ones(n), *(rankdata(c) for c in covariates)])
    rx, ry = rankdata(x), rankdata(y)
    ex = rx - z @ np.linalg.lstsq(z, rx, rcond=None)[0]
    ey = ry - z @ np.linalg.lstsq(z, ry, rcond=None)[0]
    return float(ex @ ey / math.sqrt((ex @ ex) * (ey @ ey)))


def fisher_lower(rho: float, n: int, covariates: int, z_sigmas: float) -> float:
    """The lower end of tanh(atanh ρ − z/√(n − 3 − k)): the correlation less z standard errors on the Fisher scale."""
    return math.tanh(math.atanh(rho) - z_sigmas / math.sqrt(n - 3 - covariates))
