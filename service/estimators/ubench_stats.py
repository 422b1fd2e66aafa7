"""Paired tests against a baseline and the Friedman test with Nemenyi critical difference, as U-Bench ranks models."""

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from service.errors import Degenerate

P_BINS = ((1e-4, "<=1e-4"), (1e-3, "<=1e-3"), (1e-2, "<=1e-2"), (0.05, "<=0.05"))
"""The p-value bins of U-Bench's significance rings; above 0.05 the bin is "ns"."""
WILCOXON_METHOD = {"auto": "auto", "exact": "exact", "approx": "asymptotic"}


@dataclass(frozen=True)
class PairedTest:
    """Mean difference, test statistic and p-value of a paired test."""

    mean_diff: float
    statistic: float
    p: float
    bin: str


@dataclass(frozen=True)
class FriedmanNemenyi:
    """Average ranks (1 = best), Friedman χ² and p, Nemenyi q_α and critical difference."""

    avg_ranks: list[float]
    chi2: float
    p: float
    q_alpha: float
    cd: float


def p_bin(p: float) -> str:
    """The U-Bench significance bin of ``p``."""
    return next((label for bound, label in P_BINS if p <= bound), "ns")


def paired_test(
    model: np.ndarray,
    baseline: np.ndarray,
    test: Literal["wilcoxon", "ttest_rel"],
    alternative: Literal["two-sided", "less", "greater"],
    method: Literal["auto", "exact", "approx"],
) -> PairedTest:
    """Wilcoxon signed-rank on d = round(model − baseline, 12) (``scipy.stats.wilcoxon`` with zero_method='wilcox',
    correction=False; rounding keeps float noise from splitting ties) or the paired t-test ``ttest_rel``."""
    d = np.round(model - baseline, 12)
    if test == "wilcoxon":
        if not np.any(d):
            raise Degenerate("every paired difference is zero: the signed-rank test is undefined", ("model",))
        res = stats.wilcoxon(d, alternative=alternative, method=WILCOXON_METHOD[method])
    else:
        if np.ptp(d) == 0:
            raise Degenerate("the paired differences are constant: the t statistic is undefined", ("model",))
        res = stats.ttest_rel(model, baseline, alternative=alternative)
    statistic, p = float(res.statistic), float(res.pvalue)
    if not (math.isfinite(statistic) and math.isfinite(p)):
        raise Degenerate("the test statistic is not finite for these scores", ("model",))
    return PairedTest(mean_diff=float(np.mean(model - baseline)), statistic=statistic, p=p, bin=p_bin(p))


def friedman_nemenyi(scores: np.ndarray, higher_is_better: bool, alpha: float) -> FriedmanNemenyi:
    """Ranks per dataset row (ties averaged, rank 1 = best), Friedman's χ² with scipy's tie correction
    χ² = 12N/(k(k+1)) Σ_j (R̄_j − (k+1)/2)² / (1 − Σ(t³ − t)/(N k (k² − 1))), p from χ²(k − 1), and the Nemenyi
    CD = q_α √(k(k+1)/(6N)) with q_α = studentized_range.ppf(1 − α, k, ∞)/√2 (Demšar, 2006)."""
    n, k = scores.shape
    ranks = stats.rankdata(-scores if higher_is_better else scores, axis=1)
    avg = ranks.mean(axis=0)
    _, t = np.unique(ranks + 2 * k * np.arange(n)[:, None], return_counts=True)
    ties = float(np.sum(t**3 - t))
    denom = 1.0 - ties / (n * k * (k * k - 1))
    if denom <= 0:
        raise Degenerate("every dataset ties all models: the Friedman statistic is undefined", ("scores",))
    chi2 = 12.0 * n / (k * (k + 1)) * float(np.sum((avg - (k + 1) / 2) ** 2)) / denom
    q = float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    return FriedmanNemenyi(
        avg_ranks=avg.tolist(),
        chi2=chi2,
        p=float(stats.chi2.sf(chi2, k - 1)),
        q_alpha=q,
        cd=q * math.sqrt(k * (k + 1) / (6 * n)),
    )
