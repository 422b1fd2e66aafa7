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
