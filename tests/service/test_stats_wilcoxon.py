"""``wilcoxon_signed_rank``: exact p-values computed by hand, zero differences dropped, float noise rounded."""

import itertools

import numpy as np
import pytest

from service.errors import Degenerate
from service.stats import wilcoxon_signed_rank


def exact_two_sided(ranks: list[float], w: float) -> float:
    """Two-sided exact p by enumerating the 2ⁿ sign patterns: 2·P(W⁻ ≤ w), capped at 1."""
    sums = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product((0, 1), repeat=len(ranks))
    ]
    return min(1.0, 2 * float(np.mean(np.array(sums) <= w + 1e-12)))


def test_all_positive_differences() -> None:
    """Six positive differences: W = 0, p = 2/2⁶."""
    out = wilcoxon_signed_rank([1, 2, 3, 4, 5, 6.5], [0] * 6)
    assert (out["statistic"], out["n_nonzero"]) == (0.0, 6)
    assert out["p_value"] == pytest.approx(2 / 64, rel=1e-12, abs=0)
    assert out["mean_diff"] == pytest.approx(21.5 / 6, rel=1e-15)


def test_zero_differences_are_dropped_and_float_noise_is_rounded() -> None:
    """a − b = 0.3, 0, −0.1, 0.2, 0.4 (0.1 + 0.2 − 0.3 is 5.6e-17, rounded to 0): ranks of |d| over the four
    non-zero ones 3, 1, 2, 4; W = min(W⁺, W⁻) = 1, p by enumeration of 2⁴ sign patterns = 2·2/16 = 0.25."""
    a = [0.3, 0.1 + 0.2, 0.0, 0.2, 0.4]
    b = [0.0, 0.3, 0.1, 0.0, 0.0]
    out = wilcoxon_signed_rank(a, b)
    assert (out["statistic"], out["n_nonzero"]) == (1.0, 4)
    assert out["p_value"] == pytest.approx(exact_two_sided([3, 1, 2, 4], 1.0), rel=1e-12, abs=0)
    assert out["p_value"] == pytest.approx(0.25, rel=1e-12, abs=0)


def test_no_difference_is_degenerate() -> None:
    with pytest.raises(Degenerate) as err:
        wilcoxon_signed_rank([0.5, 0.25], [0.5, 0.25])
    assert err.value.loc == ("b",)
    with pytest.raises(Degenerate):
        wilcoxon_signed_rank([1.0], [1.0, 2.0])


def test_mean_difference_and_exact_p_of_mixed_signs() -> None:
    """a − b = 0.4, −0.1, 0.2, 0.6, −0.3: ranks 4, 1, 2, 5, 3; W⁻ = 1 + 3 = 4, and 7 of the 2⁵ sign patterns
    have W⁻ ≤ 4 ({}, {1}, {2}, {3}, {4}, {1, 2}, {1, 3}): p = 2·7/32. The mean difference is 0.8/5."""
    out = wilcoxon_signed_rank([0.9, 0.1, 0.4, 0.8, 0.1], [0.5, 0.2, 0.2, 0.2, 0.4])
    assert (out["statistic"], out["n_nonzero"]) == (4.0, 5)
    assert out["p_value"] == pytest.approx(14 / 32, rel=1e-12, abs=0)
    assert out["p_value"] == pytest.approx(exact_two_sided([4, 1, 2, 5, 3], 4.0), rel=1e-12, abs=0)
    assert out["mean_diff"] == pytest.approx(0.16, rel=1e-12, abs=0)


def test_a_single_pair_is_a_valid_sample() -> None:
    """One non-zero difference: W = 0 and both sign patterns are as extreme, p = 2·(1/2) = 1."""
    out = wilcoxon_signed_rank([0.75], [0.25])
    assert out == {"mean_diff": 0.5, "statistic": 0.0, "p_value": 1.0, "n_nonzero": 1}


def test_differences_below_half_a_unit_of_the_twelfth_decimal_are_ties_at_zero() -> None:
    """4e-13 rounds to 0 at 12 decimals: dropped like an exact zero; the other three are all positive."""
    out = wilcoxon_signed_rank([1.0 + 4e-13, 0.5, 0.7, 0.9], [1.0, 0.0, 0.0, 0.0])
    assert (out["statistic"], out["n_nonzero"]) == (0.0, 3)
    assert out["p_value"] == pytest.approx(2 / 8, rel=1e-12, abs=0)
    assert out["mean_diff"] == pytest.approx(2.1 / 4, rel=1e-12, abs=0)  # the mean keeps every pair


@pytest.mark.parametrize(("a", "b"), [([], []), ([1.0], [1.0, 2.0]), ([1.0, 0.0], [[1.0, 0.0]])])
def test_empty_or_mismatched_samples_name_the_second_argument(a: list, b: list) -> None:
    with pytest.raises(Degenerate) as err:
        wilcoxon_signed_rank(a, b)
    assert err.value.loc == ("b",)
