"""moead: the scalarised subproblems with N + 1 ≠ n + 1 subproblems (weights i/N and 1 − i/N, no longer mirror
images of the front) and the power-law mutation weights at β ≠ 1.5, by hand (docs/moead.md)."""

import pytest

from service.estimators.moead_sim import power_law_weights, scalar_table


@pytest.mark.parametrize(("n", "num_sub"), [(6, 4), (3, 7)])
def test_scalar_tables_are_n_times_g_with_weights_i_over_n(n: int, num_sub: int) -> None:
    """N·g_i(k) for k = |x|₁: Tchebycheff max{i·k, (N − i)·(n − k)}, weighted sum i·k + (N − i)·(n − k), with
    N = num_subproblems − 1 apart from n (N = 3 < n = 6, N = 6 > n = 3)."""
    big_n = num_sub - 1
    tcheb = scalar_table(n, num_sub, "tchebycheff")
    wsum = scalar_table(n, num_sub, "weighted_sum")
    assert tcheb.shape == wsum.shape == (num_sub, n + 1)
    for i in range(num_sub):
        for k in range(n + 1):
            assert tcheb[i, k] == max(i * k, (big_n - i) * (n - k))
            assert wsum[i, k] == i * k + (big_n - i) * (n - k)


def test_power_law_weights_at_beta_2_5() -> None:
    """P(ℓ) = ℓ^(−2.5) / Σ_{m≤4} m^(−2.5) for ℓ = 1..4."""
    norm = 1 + 2**-2.5 + 3**-2.5 + 4**-2.5
    assert power_law_weights(4, 2.5).tolist() == pytest.approx(
        [1 / norm, 2**-2.5 / norm, 3**-2.5 / norm, 4**-2.5 / norm], rel=1e-14
    )
