"""Tests of the steering family's numerics (``service/estimators/steering_metrics.py``) by hand computation."""

import warnings

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators.steering_metrics import (
    MAX_ELEMENTS,
    as_stack,
    check_stack,
    check_total,
    cosine,
    entropy_rank,
    nullable,
    participation_ratio,
    unit_rows,
)


@pytest.mark.parametrize(
    ("value", "ndim"),
    [([[[1.0], [2.0, 3.0]]], 3), ([[1.0, 2.0]], 3), ([], 1), ([[1.0, float("nan")]], 2), ([float("inf")], 1)],
    ids=["ragged", "ndim", "empty", "nan", "inf"],
)
def test_as_stack_rejects_with_the_given_loc(value: list, ndim: int) -> None:
    with pytest.raises(InvalidInput) as err:
        as_stack(value, ("grads", "pps"), ndim=ndim)
    assert err.value.loc == ("grads", "pps")


def test_caps_are_inclusive() -> None:
    # n = 4096, L = 128, d = 16384 (a zero-stride view: only the shape is read) and n·L·d = 2e7 pass; one more fails.
    check_stack(np.broadcast_to(np.zeros(1), (4096, 128, 16384)), ("x",))
    check_total(MAX_ELEMENTS, ("x",))
    for shape in ((4097, 1, 1), (1, 129, 1), (1, 1, 16385)):
        with pytest.raises(InvalidInput) as err:
            check_stack(np.broadcast_to(np.zeros(1), shape), ("x",))
        assert err.value.loc == ("x",)
    with pytest.raises(InvalidInput) as err:
        check_total(MAX_ELEMENTS + 1, ("grads",))
    assert err.value.loc == ("grads",)


def test_unit_rows_leave_zero_rows_at_zero() -> None:
    unit, norms = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert unit.tolist() == [[0.6, 0.8], [0.0, 0.0]]
    assert norms.tolist() == [5.0, 0.0]


def test_nullable_returns_python_floats_and_none() -> None:
    got = nullable(np.array([[1, 2], [3, 4]]))
    assert got == [[1.0, 2.0], [3.0, 4.0]]
    assert all(type(x) is float for row in got for x in row)
    assert nullable(np.array([0.5, np.nan])) == [0.5, None]
    assert nullable(np.float64(np.nan)) is None
    assert type(nullable(np.int64(2))) is float


def test_participation_ratio_per_row_by_hand() -> None:
    # (Σe)²/Σe² per row: (1, 1, 0) → 4/2 = 2; (1, 2, 2) → 25/9; a zero row → NaN (a float NaN, no warning).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = participation_ratio(np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 2.0], [0.0, 0.0, 0.0]]))
    assert got[:2] == pytest.approx([2.0, 25 / 9], rel=1e-15)
    assert np.isnan(got[2])
    assert participation_ratio(np.array([3.0])) == 1.0


def test_entropy_rank_per_row_by_hand() -> None:
    # p = (¼, ¾, 0): exp H = 4^¼·(4/3)^¾ (0 log 0 = 0); weights (0.1, 0.3) sum below 1 and are normalised first.
    # p = (¼, ¼, ½): exp H = 2^1.5. A zero row is NaN as a float, without a RuntimeWarning; 1-D input is one row.
    weights = np.array([[0.1, 0.3, 0.0], [1.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = entropy_rank(weights)
    assert got[:2] == pytest.approx([4**0.25 * (4 / 3) ** 0.75, 2**1.5], rel=1e-14)
    assert np.isnan(got[2])
    assert entropy_rank(np.array([1.0, 1.0, 2.0])) == pytest.approx(2**1.5, rel=1e-14)
    stacked = entropy_rank(np.array([[[0.5, 0.5]]]))
    assert stacked.shape == (1, 1)
    assert stacked[0, 0] == pytest.approx(2.0, rel=1e-15)


def test_cosine_is_clipped_to_one_and_nan_for_a_zero_vector() -> None:
    # For a = (0.1, 0.7) the unclipped ⟨a, a⟩/(‖a‖·‖a‖) rounds to 1 + 2⁻⁵²; Cauchy-Schwarz bounds it by 1.
    a = np.array([0.1, 0.7])
    assert (a @ a) / (np.linalg.norm(a) ** 2) > 1.0
    assert cosine(a, a) == 1.0
    assert cosine(a, -a) == -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cosine(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))
    assert np.isnan(got).all()
