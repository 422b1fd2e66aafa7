"""minhash.simulate: the hashing label of each row against a property only circulant hashing has, and each row's
true value against its target (the MSE identity ties it to the reported mean and variance)."""

import pytest

from service.estimators import minhash as mh
from service.registry import no_progress


def test_circulant_rows_are_exact_when_the_shifts_cover_the_universe() -> None:
    """A ∪ B fills Z_D (f = D = 11) and K = D: the D circulant shifts move π's minimum over every position once, so
    each element is the argmin for exactly one hash and Ĵ = a/f = 3/11 in every trial (variance 0). Independent
    permutations have the binomial variance J(1 − J)/K = (3/11)(8/11)/11 ≈ 0.018 instead."""
    res = mh.simulate_fn(mh.SimulateParams(intersection=3, union=11, universe=11, num_perm=11, trials=300, seed=1),
                         no_progress)  # fmt: skip
    assert [row.hashing for row in res.estimators] == ["independent", "circulant"]
    rows = {row.hashing: row for row in res.estimators}
    assert rows["circulant"].estimator == "cminhash_sigma_pi" and rows["independent"].estimator == "classic"
    assert rows["circulant"].variance == 0.0 and rows["circulant"].mean == pytest.approx(3 / 11, abs=1e-15)
    assert rows["independent"].variance == pytest.approx(3 / 11 * 8 / 11 / 11, rel=0.25)


def test_true_values_are_the_targets_and_satisfy_the_mse_identity() -> None:
    """|X| = 6, |Y| = 9, a = 4 (f = 11): the intersection rows' truth is a = 4, the Jaccard rows' a/f = 4/11, and
    for every row MSE = (n − 1)/n·variance + (mean − truth)² over n trials (variance with ddof = 1)."""
    trials = 200
    params = mh.SimulateParams(intersection=4, universe=101, num_perm=16, query_size=6, stored_size=9, trials=trials,
                               seed=3)  # fmt: skip
    res = mh.simulate_fn(params, no_progress)
    truth = {"jaccard": 4 / 11, "intersection": 4.0}
    assert [(e.hashing, e.target) for e in res.estimators] == [
        ("independent", "jaccard"), ("circulant", "jaccard"), ("independent", "intersection"),
        ("independent", "jaccard"), ("circulant", "intersection"), ("circulant", "jaccard"),
    ]  # fmt: skip
    for e in res.estimators:
        assert e.true_value == truth[e.target]
        identity = (trials - 1) / trials * e.variance + (e.mean - e.true_value) ** 2
        assert e.mse == pytest.approx(identity, rel=1e-9, abs=1e-15)
