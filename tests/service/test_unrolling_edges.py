"""unrolling.jacobian_error's edges: the sampled iterations, the boundaries of its input checks, hand-computed
small cases of the curve fields."""

import math

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators.unrolling import JacobianErrorParams, cost, jacobian_error, sample_times
from service.registry import no_progress


def test_every_iteration_is_sampled_up_to_the_budget() -> None:
    # 1000 samples less the 4 always-kept iterations: K = 996 keeps every iteration, K = 997 does not.
    assert sample_times(996, [0, 1, 5, 996]).tolist() == list(range(1, 997))
    assert sample_times(3, [0, 1]).tolist() == [1, 2, 3]
    t = sample_times(997, [0, 1, 5, 997])
    assert 0.98 * 996 <= t.size < 997 and t[0] == 1 and t[-1] == 997


@pytest.mark.parametrize("k", [1200, 20_000])
def test_long_runs_are_sampled_log_spaced_with_the_given_iterations(k: int) -> None:
    extra = [0, 1, 2, k]
    t = sample_times(k, extra)
    assert 0.98 * 996 <= t.size <= 996 and np.all(np.diff(t) > 0)
    assert t[0] == 1 and t[-1] == k and t.dtype == np.int64
    assert t[:10].tolist() == list(range(1, 11))  # dense where the log grid is finer than the integers
    if k == 20_000:  # ~230 points a decade: the top decade is far from integer rounding
        top = t[t > k / 10]
        step = np.diff(top) / top[:-1]  # a geometric grid has a constant relative step
        assert step.max() / step.min() < 1.3
    kept = sample_times(k, [300, 301, 5003, k])
    assert {e for e in (300, 301, 5003, k) if e <= k} <= set(kept.tolist())
    assert kept.min() == 1 and kept.max() == k  # an extra beyond K is dropped


def call(problem: dict, **kw: object):
    return jacobian_error(JacobianErrorParams(problem=problem, **kw), no_progress)


SCALAR = {"kind": "quadratic", "h": [[1.0]], "dh": [[1.0]], "b": [1.0], "db": [0.0]}


def test_one_dimensional_run_by_hand() -> None:
    """H = ∂H = 1, b = 1, ∂b = 0, h = 0.5, x0 = 3: x* = 1, J* = −1, ρ = 0.5, x_t = 1 + 2·0.5^t and
    J_{t+1} = 0.5·J_t − 0.5·x_t from J_k0 = 0, unrolled here by hand."""
    res = call(SCALAR, step=0.5, iterations=6, k0_list=[0, 2], x0=[3.0])
    assert (res.L, res.mu, res.kappa, res.rho, res.step) == (1.0, 1.0, 1.0, 0.5, 0.5)
    assert res.method == "closed_form" and res.j_star_norm == pytest.approx(1.0, rel=1e-15)
    # x0 ≠ 0: the bound's transient peak h‖∂H‖·‖x0 − x*‖/(e·ρ·ln(1/ρ)) = 2/(e·ln 2) ≈ 1.06 exceeds ‖J*‖ = 1
    assert res.curse_expected is True
    assert res.implicit_error == pytest.approx(2 * 0.5**6, rel=1e-12)  # |x_K − x*|·|∂H|/|H|/|J*|
    first, late = res.curves
    assert first.t == late.t == [1, 2, 3, 4, 5, 6]
    # J_1..J_6 = −1.5, −1.75, −1.625, −1.4375, −1.28125, −1.171875
    assert first.rel_error == pytest.approx([0.5, 0.75, 0.625, 0.4375, 0.28125, 0.171875], abs=1e-14)
    assert first.abs_error == pytest.approx(first.rel_error, abs=1e-14)
    assert (first.t_peak, first.peak_rel_error, first.peak_abs_error) == (2, pytest.approx(0.75), pytest.approx(0.75))
    assert first.rel_error_at_K == pytest.approx(0.171875, abs=1e-14)
    # bound ρ^(m−1)(ρ‖J*‖ + m·h·‖∂H‖·ρ^k0·‖x0 − x*‖)/‖J*‖, m = t − k0
    bound0 = [0.5 ** (m - 1) * (0.5 + m * 0.5 * 2.0) for m in range(1, 7)]
    assert first.bound == pytest.approx(bound0, rel=1e-14)
    assert first.predicted_t_peak == pytest.approx(1 / math.log(2), rel=1e-14)
    assert first.predicted_peak == pytest.approx(2 / (math.e * math.log(2)), rel=1e-14)
    assert (first.stored_iterates, first.stored_bytes) == (6, 48)
    # k0 = 2: J = 0 up to t = 2 (relative error 1), then J_3..J_6 = −0.75, −1, −1.0625, −1.0625
    assert late.rel_error == pytest.approx([1.0, 1.0, 0.25, 0.0, 0.0625, 0.0625], abs=1e-14)
    assert (late.t_peak, late.peak_rel_error) == (3, pytest.approx(0.25, abs=1e-14))
    bound2 = [1.0, 1.0] + [0.5 ** (m - 1) * (0.5 + m * 0.5 * 0.25 * 2.0) for m in range(1, 5)]
    assert late.bound == pytest.approx(bound2, rel=1e-14)
    assert late.predicted_t_peak == pytest.approx(2 + 1 / math.log(2), rel=1e-14)
    assert late.predicted_peak == pytest.approx(0.25 * 2 / (math.e * math.log(2)), rel=1e-14)
    assert (late.stored_iterates, late.stored_bytes) == (4, 32)


def test_a_small_x0_gap_expects_no_curse_even_below_sqrt2() -> None:
    # As above with x0 = 2.5: the transient peak 1.5/(e·ln 2) ≈ 0.80 < 1; with x0 = 0 the rule is h·L > √2 (0.5 < √2)
    assert call(SCALAR, step=0.5, iterations=3, x0=[2.5]).curse_expected is False
    assert call(SCALAR, step=0.5, iterations=3, x0=[3.0]).curse_expected is True
    assert call(SCALAR, step=0.5, iterations=3).curse_expected is False


def test_step_at_one_over_l_in_one_dimension_contracts_in_one_step() -> None:
    # H = 2, h = 1/L = 0.5: ρ = 0, x_1 = x*; no transient, so no predicted peak and no curse.
    res = call(SCALAR | {"h": [[2.0]]}, step_rule="1/L", iterations=4, k0_list=[0, 1], x0=[5.0])
    assert res.rho == 0.0 and res.curse_expected is False
    assert [c.predicted_t_peak for c in res.curves] == [0.0, 1.0]
    assert [c.predicted_peak for c in res.curves] == [None, None]


def test_zero_j_star_leaves_the_relative_fields_null() -> None:
    # H = diag(2, 1), b = ∂b = 0: x* = 0, J* = 0. h = 0.5, x0 = (1, −1): J_t = (−0.5·[t = 1], t·0.5^t).
    problem = {"kind": "quadratic", "h": [[2.0, 0.0], [0.0, 1.0]], "dh": [[1.0, 0.0], [0.0, 1.0]]}
    res = call(problem | {"b": [0.0, 0.0], "db": [0.0, 0.0]}, step=0.5, iterations=4, x0=[1.0, -1.0])
    assert res.j_star_norm == 0.0 and res.implicit_error is None
    # x0 ≠ 0 and ‖J*‖ = 0: any transient exceeds it
    assert res.curse_expected is True
    c = res.curves[0]
    assert c.abs_error == pytest.approx([math.sqrt(0.5), 0.5, 0.375, 0.25], abs=1e-14)
    assert (c.t_peak, c.peak_abs_error) == (1, pytest.approx(math.sqrt(0.5), abs=1e-14))
    assert c.rel_error is None and c.bound is None and c.peak_rel_error is None
    assert c.rel_error_at_K is None and c.predicted_peak is None


def test_symmetry_is_judged_relative_to_the_largest_entry() -> None:
    # |H − Hᵀ| = 1e-7 ≤ 1e-12·max|H| = 1e-6: accepted, and symmetrised (H₁₂ = H₂₁ = 5e-8).
    res = call(
        SCALAR | {"h": [[1e6, 1e-7], [0.0, 1.0]], "dh": np.eye(2).tolist(), "b": [1.0, 1.0]} | {"db": [0.0, 0.0]},
        step_rule="1/L",
        iterations=2,
    )
    big_l, mu = res.L, res.mu
    assert big_l == pytest.approx(1e6, rel=1e-12) and mu == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(InvalidInput) as err:
        call(
            SCALAR | {"h": [[1.0, 2e-12], [0.0, 1.0]], "dh": np.eye(2).tolist(), "b": [1.0, 1.0]} | {"db": [0.0, 0.0]},
            step_rule="1/L",
            iterations=2,
        )
    assert err.value.loc == ("problem", "h")


def test_singular_h_is_rejected() -> None:
    problem = SCALAR | {"h": [[1.0, 0.0], [0.0, 0.0]], "dh": np.eye(2).tolist(), "b": [1.0, 0.0], "db": [0.0, 0.0]}
    with pytest.raises(InvalidInput) as err:
        call(problem, step_rule="1/L", iterations=2)
    assert err.value.loc == ("problem",)


def test_cost_picks_the_closed_form_only_for_a_multiple_of_the_identity() -> None:
    def cost_of(dh: list, p: int = 2) -> float:
        problem = {"kind": "quadratic", "h": np.eye(p).tolist(), "dh": dh, "b": [0.0] * p, "db": [0.0] * p}
        return cost(JacobianErrorParams(problem=problem, step_rule="1/L", iterations=10, k0_list=[0, 1]))

    closed = 2 * 8 + 12 * 10 * 2 * 2  # 2p³ + 12·K·p·#k0
    recursion = 2 * 8 + 2 * 8 + 10 * (4 * (2 + 2) + 20_000)  # + 2p³ + K·(p²(2 + #k0) + 2·10⁴)
    assert cost_of([[2.0, 0.0], [0.0, 2.0]]) == closed
    assert cost_of([[1.0, 0.0], [0.0, 2.0]]) == recursion
    assert cost_of([[1.0, 1.0], [0.0, 1.0]]) == recursion
    assert cost_of([[1.0, 0.0], [0.0]]) == recursion  # ragged: not c·I (rejected later with its field)
    assert cost_of([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]) == recursion  # not square
    ridge = {"kind": "ridge", "x": np.ones((30, 5)).tolist(), "y": [0.0] * 30, "theta": 1.0}
    params = JacobianErrorParams(problem=ridge, step_rule="1/L", iterations=50, k0_list=[0, 1])
    assert cost(params) == 30 * 25 + 2 * 125 + 12 * 50 * 5 * 2  # n·p² + 2p³ + 12·K·p·#k0


def test_cost_of_an_uploaded_non_square_dh() -> None:
    # An uploaded ∂H arrives as an array: a 2 × 3 one is not c·I (its shape is rejected later, naming the field).
    problem = {"kind": "quadratic", "h": np.eye(2).tolist(), "dh": np.eye(2).tolist(), "b": [0.0] * 2, "db": [0.0] * 2}
    params = JacobianErrorParams(problem=problem, step_rule="1/L", iterations=10, k0_list=[0, 1])
    for dh, closed in ((np.ones((2, 3)), False), (np.ones((3, 2)), False), (3.0 * np.eye(2), True)):
        uploaded = params.model_copy(update={"problem": params.problem.model_copy(update={"dh": dh})})
        expected = 2 * 8 + 12 * 10 * 2 * 2 if closed else 2 * 8 + 2 * 8 + 10 * (4 * (2 + 2) + 20_000)
        assert cost(uploaded) == expected


def test_long_runs_sample_k0_and_the_step_after_it() -> None:
    # H = ∂H = 1, b = ∂b = 0 (x* = 0, J* = 0), h = 0.001 (r = 0.999), x0 = 1, K = 20,000, k0 = 10,001: from J_k0 = 0,
    # J_(k0+m) = −m·h·r^(m−1)·x_k0 with x_k0 = r^k0, largest near m = 1/ln(1/r) ≈ 1000. Near 10⁴ the log grid is ~60
    # iterations apart, so k0 + 1 is there only as an extra (t_peak is not k0 + 1 here).
    res = call(SCALAR | {"b": [0.0]}, step=0.001, iterations=20_000, k0_list=[0, 10_001], x0=[1.0])
    late = res.curves[1]
    assert {10_001, 10_002, late.t_peak, 20_000} <= set(late.t) and len(late.t) <= 1000
    assert abs(late.t_peak - 11_000) <= 2
    i = late.t.index(10_001)
    assert late.abs_error[i] == 0.0
    assert late.abs_error[i + 1] == pytest.approx(0.001 * 0.999**10_001, rel=1e-9)
    assert late.t[i - 1] < 10_001 - 10  # the grid itself is sparse here


def test_bound_relative_to_a_j_star_other_than_one() -> None:
    # H = ∂H = 1, b = 2, x0 = 0, h = 0.5: x* = 2, J* = −2, ‖x0 − x*‖ = 2, ρ = 0.5; for k0 = 0 the bound is
    # ρ^(m−1)(ρ·2 + m·0.5·2)/2 = 0.5^(m−1)(1 + m)/2, m = t.
    res = call(SCALAR | {"b": [2.0]}, step=0.5, iterations=4)
    assert res.j_star_norm == pytest.approx(2.0, rel=1e-15)
    assert res.curves[0].bound == pytest.approx([1.0, 0.75, 0.5, 0.3125], rel=1e-14)


def test_a_step_above_one_is_fine_when_l_is_small() -> None:
    # H = 0.5, h = 1.5: h·L = 0.75 < 2, so gradient descent contracts with ρ = |1 − 0.75| = 0.25.
    res = call(SCALAR | {"h": [[0.5]]}, step=1.5, iterations=3)
    assert res.step == 1.5 and res.rho == 0.25
    with pytest.raises(InvalidInput) as err:  # h·L = 2 exactly: |1 − hL| = 1, no contraction
        call(SCALAR | {"h": [[0.5]]}, step=4.0, iterations=3)
    assert err.value.loc == ("step",)


@pytest.mark.parametrize(
    ("problem", "loc"),
    [
        ({"kind": "ridge", "x": [[1.0, 0.0], [1.0]], "y": [0.0, 1.0], "theta": 1.0}, ("problem", "x")),
        ({"kind": "ridge", "x": [[1.0, 0.0], [0.0, 1.0]], "y": [0.0, 1.0, 2.0], "theta": 1.0}, ("problem", "y")),
        ({"kind": "quadratic", "h": [[1.0, 0.0]], "dh": [[1.0]], "b": [1.0], "db": [0.0]}, ("problem", "h")),
        ({"kind": "quadratic", "h": [[1.0, 0.0], [0.0]], "dh": np.eye(2).tolist()} | {"b": [1.0] * 2, "db": [0.0] * 2},
         ("problem", "h")),
        ({"kind": "quadratic", "h": np.eye(2).tolist(), "dh": np.eye(2).tolist(), "b": [1.0] * 2, "db": [0.0]},
         ("problem", "db")),
    ],
)  # fmt: skip
def test_misshapen_arrays_name_their_field(problem: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        call(problem, step_rule="1/L", iterations=2)
    assert err.value.loc == loc


def test_asymmetry_of_exactly_the_tolerance_is_accepted() -> None:
    # |H₁₂ − H₂₁| = 1e-12 = 1e-12·max|H|: not above the tolerance.
    problem = {"kind": "quadratic", "h": [[1.0, 1e-12], [0.0, 1.0]], "dh": np.eye(2).tolist()}
    res = call(problem | {"b": [1.0, 1.0], "db": [0.0, 0.0]}, step_rule="1/L", iterations=2)
    assert res.kappa == pytest.approx(1.0, abs=1e-11)


@pytest.mark.parametrize(("rule", "step"), [("1/L", 0.5), ("sqrt2/L", math.sqrt(2.0) / 2.0), ("2/(mu+L)", 2.0 / 2.5)])
def test_step_rules_by_hand(rule: str, step: float) -> None:
    # H = diag(2, 0.5): L = 2, μ = 0.5.
    problem = {"kind": "quadratic", "h": [[2.0, 0.0], [0.0, 0.5]], "dh": np.eye(2).tolist()}
    res = call(problem | {"b": [1.0, 1.0], "db": [0.0, 0.0]}, step_rule=rule, iterations=2)
    assert res.step == pytest.approx(step, rel=1e-15)


def test_condition_number_of_exactly_the_cap_is_accepted() -> None:
    # H = diag(10¹²/2¹⁴, 2⁻¹⁴): both exact in binary, κ = 10¹² exactly (the cap); twice as small a μ is over it.
    problem = {"kind": "quadratic", "h": [[1e12 / 16384, 0.0], [0.0, 2.0**-14]], "dh": np.eye(2).tolist()}
    problem |= {"b": [1.0, 1.0], "db": [0.0, 0.0]}
    assert call(problem, step_rule="1/L", iterations=2).kappa == 1e12
    with pytest.raises(InvalidInput) as err:
        call(problem | {"h": [[1e12 / 16384, 0.0], [0.0, 2.0**-15]]}, step_rule="1/L", iterations=2)
    assert err.value.loc == ("problem",)


def test_zero_start_curse_rule_is_h_times_l_above_sqrt2() -> None:
    # x0 = 0: e(2)/e(1) = |1 − (hL)²| for p = 1. H = 2, h = 0.8: hL = 1.6 > √2 (h/L = 0.4 is not the rule).
    assert call(SCALAR | {"h": [[2.0]]}, step=0.8, iterations=3).curse_expected is True
    # H = 1, h = √2: hL = √2 exactly, e(2) = e(1), no growth
    res = call(SCALAR, step_rule="sqrt2/L", iterations=3)
    assert res.step == math.sqrt(2.0) and res.curse_expected is False
