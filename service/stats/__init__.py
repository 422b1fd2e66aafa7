"""Shared statistics for every scorer: one implementation each."""

from service.stats.bootstrap import (
    MAX_RESAMPLES,
    MAX_WORK,
    bootstrap_mean_ci,
    bootstrap_means,
    check_budget,
    percentile_interval,
)
from service.stats.cluster import cluster_robust_se, factorize
from service.stats.intervals import binomial_se, mean_stderr, wilson, wilson_interval, z_value
from service.stats.multiple import holm
from service.stats.paired import mcnemar, mcnemar_exact, paired_bootstrap, wilcoxon_signed_rank
from service.stats.tails import (
    binom_tail_ge,
    binom_two_sided,
    poisson_binomial_tail_ge,
    poisson_binomial_tail_le,
    poisson_binomial_two_sided,
)

__all__ = [
    "MAX_RESAMPLES",
    "MAX_WORK",
    "binom_tail_ge",
    "binom_two_sided",
    "binomial_se",
    "bootstrap_mean_ci",
    "bootstrap_means",
    "check_budget",
    "cluster_robust_se",
    "factorize",
    "holm",
    "mcnemar",
    "mcnemar_exact",
    "mean_stderr",
    "paired_bootstrap",
    "percentile_interval",
    "poisson_binomial_tail_ge",
    "poisson_binomial_tail_le",
    "poisson_binomial_two_sided",
    "wilcoxon_signed_rank",
    "wilson",
    "wilson_interval",
    "z_value",
]
