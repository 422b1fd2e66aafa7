"""ubench.friedman_nemenyi on a non-square matrix: its sizes, ranks and χ² against scipy (docs/ubench.md)."""

import numpy as np
import pytest
from scipy import stats

from service.estimators import ubench as U
from service.registry import no_progress


def test_friedman_sizes_ranks_and_chi2_on_a_non_square_matrix() -> None:
    """5 datasets × 3 models (a transposed matrix would give 3 × 5); rank 1 = best, χ² as scipy's."""
    scores = np.array([[0.9, 0.7, 0.8], [0.6, 0.5, 0.7], [0.8, 0.6, 0.7], [0.75, 0.7, 0.65], [0.9, 0.8, 0.85]])
    res = U.friedman_fn(U.FriedmanParams(scores=scores.tolist()), no_progress)
    assert (res.n_datasets, res.n_models) == (5, 3)
    ranks = np.vstack([stats.rankdata(-row) for row in scores]).mean(axis=0)
    assert res.avg_ranks == pytest.approx(ranks.tolist(), rel=1e-12)
    assert res.chi2 == pytest.approx(stats.friedmanchisquare(*scores.T).statistic, rel=1e-12)
