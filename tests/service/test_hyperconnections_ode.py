"""Regime rules and the crossing frequency of `hyperconnections_ode`, on hand-made norm and projection series."""

import warnings

import numpy as np
import pytest

from service.estimators.hyperconnections_ode import (
    Spectrum,
    System,
    _frequency,
    _regime,
    field,
    grouped_eigenvalues,
    rk4,
)


def test_frequency_of_a_sampled_cosine() -> None:
    # x(t) = cos(1.7t + 0.3), dt = 0.05 over [0, 2·8·2π/1.7]: the second half holds 8 whole periods, 16 crossings.
    omega, dt = 1.7, 0.05
    times = np.arange(0.0, 16 * 2 * np.pi / omega + dt / 2, dt)
    proj = np.cos(omega * times + 0.3)
    assert _frequency(times, proj, np.ones_like(times)) == pytest.approx(omega, rel=2e-4)


def test_frequency_needs_four_crossings_of_the_second_half() -> None:
    # cos(πt) on [0, 8]: the second half [4, 8] crosses its mean at ≈ 4.5, 5.5, 6.5, 7.5, exactly the four needed;
    # the frequency is π·(4 − 1)/3 = π (the mean 1/401, from the end point, moves the crossings by ±8e-4).
    times = np.linspace(0.0, 8.0, 801)
    proj = np.cos(np.pi * times)
    assert _frequency(times, proj, np.ones_like(times)) == pytest.approx(np.pi, rel=2e-3)
    assert _frequency(times[:741], proj[:741], np.ones(741)) is None  # [3.7, 7.4]: 4.5, 5.5, 6.5 only


def test_frequency_with_crossings_off_the_sample_midpoints() -> None:
    # A triangle wave is linear between samples when its vertices are on the grid, so interpolated crossings are
    # exact: period 2.2 (vertices every 1.1 = 11 steps of 0.1), offset so that zeros fall 0.3 of a step after a
    # sample; the second half [11, 22] holds 5 whole periods, whose mean is 0 over the samples but for one end point.
    times = np.round(np.arange(0.0, 22.0 + 1e-9, 0.1), 10)
    phase = (times + 0.03) % 2.2
    proj = np.where(phase < 1.1, phase - 0.55, 1.65 - phase)
    assert _frequency(times, proj, np.ones_like(times)) == pytest.approx(2 * np.pi / 2.2, rel=2e-3)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
    ("times", "norms", "regime"),
    [
        (range(5), [1.0, 1.0, 1.0, 1.0, 1e-7], "collapse"),  # ‖H‖ < 1e-6 at the end, whatever came before
        (range(5), [1.0, 1.0, 1.0, 1.0, 1e-6], "undetermined"),  # not below 1e-6; < 8 points: no slope rule
        (range(8), np.exp(-np.arange(8.0)), "collapse"),  # 8 points: quarters of 2, slopes −1 and −1
        # last-quarter slope ln(1/2)/693.147… = −1e-3 exactly (not below −1e-3), third quarter flat
        ([0, 1, 2, 3, 4, 5, 6, 6 + 693.1471805599452], [1, 1, 1, 1, 1, 1, 1, 0.5], "undetermined"),
        # slopes ln(1/4) and ln(1/2): the last is exactly half the third (ln 0.25 = 2 ln 0.5 in floats too)
        (range(8), [1, 1, 1, 1, 1, 0.25, 1, 0.5], "collapse"),
    ],
)
def test_regime_rules(times: list[float], norms: list[float], regime: str) -> None:
    assert _regime(np.asarray(times, dtype=float), np.asarray(norms, dtype=float), 1.0, None) == regime


def linear_system(a_r: list[list[float]], n_tokens: int = 2, dim: int = 2) -> System:
    """β = 0: dH/dt = (A_r − I)ᵀH, linear in H, the attention term switched off."""
    n = len(a_r)
    return System(
        a_r=np.array(a_r, dtype=float),
        alpha=np.ones(n),
        beta=np.zeros(n),
        w=np.eye(dim),
        v=-np.eye(dim),
        n_tokens=n_tokens,
        causal=False,
    )


def rk4_factor(z: float) -> float:
    """One classical RK4 step of y' = λy multiplies y by 1 + z + z²/2 + z³/6 + z⁴/24, z = λ·dt."""
    return 1 + z + z * z / 2 + z**3 / 6 + z**4 / 24


@pytest.mark.filterwarnings("error")
def test_rk4_decay_follows_the_rk4_stability_polynomial() -> None:
    # One stream, a_r = 0.5: dH/dt = −0.5·H, so ‖H_k‖ = ‖H_0‖·p(−0.5·dt)^k; 40 steps of 0.25.
    h0 = np.arange(1.0, 5.0).reshape(1, 2, 2)
    seen: list[float] = []
    run = rk4(linear_system([[0.5]]), h0, 10.0, 0.25, seen.append)
    assert run.t_end == 10.0 and run.times.size == 41
    np.testing.assert_allclose(run.norms, np.linalg.norm(h0) * rk4_factor(-0.125) ** np.arange(41), rtol=1e-13)
    assert seen == [k / 40 for k in range(1, 41)]
    one = rk4(linear_system([[0.5]]), h0, 0.1, 0.25, seen.append)  # t_max/dt rounds to 0: one step
    assert one.t_end == 0.25 and one.norms.size == 2


def test_rk4_progress_every_max_1_steps_over_50() -> None:
    seen: list[float] = []
    rk4(linear_system([[0.5]]), np.ones((1, 2, 2)), 12.0, 0.1, seen.append)  # 120 steps: every 2nd
    assert seen == pytest.approx([k / 120 for k in range(2, 121, 2)], rel=1e-15)


@pytest.mark.filterwarnings("error")
def test_rk4_rotation_between_two_streams_oscillates_at_its_angular_frequency() -> None:
    # (A_r − I)ᵀ = [[0, −ω], [ω, 0]]: H rotates between the streams, its projection on H0 is ‖H0‖·cos(ωt).
    # A small H0 (‖H0‖ = 0.02) checks that the projection is on the unit direction H0/‖H0‖.
    omega = 0.8
    h0 = np.zeros((2, 2, 2))
    h0[0, 0, 0] = 0.02
    run = rk4(linear_system([[1.0, omega], [-omega, 1.0]]), h0, 60.0, 0.05, lambda f: None)
    assert run.regime == "oscillation"
    assert run.frequency == pytest.approx(omega, rel=2e-3)
    assert run.norms[0] == 0.02
    np.testing.assert_allclose(run.norms, 0.02, rtol=1e-6)  # RK4's amplitude error ~(ωdt)⁶/144 per step


def test_rk4_divergence_is_a_norm_above_1e6_and_an_overflow_is_recorded_as_the_largest_double() -> None:
    # a_r = 1 (no residual term), β = 0: dH/dt = 0, so ‖H‖ = 1e6 forever: not above the limit.
    h0 = np.zeros((1, 2, 2))
    h0[0, 0, 0] = 1e6
    still = rk4(linear_system([[1.0]]), h0, 1.0, 0.5, lambda f: None)
    assert still.regime == "nontrivial" and still.norms.tolist() == [1e6, 1e6, 1e6]
    # a_r = 2: dH/dt = H, one step of 0.5 multiplies by p(0.5) = 1.6484375; from 1e6 the first step diverges.
    grow = rk4(linear_system([[2.0]]), h0, 5.0, 0.5, lambda f: None)
    assert grow.regime == "divergence" and grow.t_end == 0.5
    assert grow.norms.tolist() == [1e6, 1e6 * rk4_factor(0.5)]
    h0[0, 0, 0] = 1e150  # the norm of a step of 1e170 overflows (its square is above the largest double)
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        burst = rk4(linear_system([[1e20]]), h0, 5.0, 0.5, lambda f: None)
    assert burst.regime == "divergence" and burst.norms.tolist() == [1e150, np.finfo(float).max]


@pytest.mark.parametrize(
    ("values", "leading"),
    [
        ([1.0, 1.0 + 2.0j, 1.0 - 1.0j], 1.0 + 2.0j),  # a tie in the real part: the largest |Im|
        ([0.0, -1e-12 + 1.0j], -1e-12 + 1.0j),  # within 1e-12 (the bound included) is a tie
        ([0.0, -0.5 + 2.0j], 0.0),  # 0.5 below is not
    ],
)
def test_leading_eigenvalue_breaks_real_part_ties_within_1e_12_by_the_largest_imaginary_part(
    values: list[complex], leading: complex
) -> None:
    empty = np.empty(0)
    spec = Spectrum(np.array(values, dtype=complex), empty, empty, empty, empty, empty, empty, empty)
    assert spec.leading() == leading


@pytest.mark.parametrize(
    ("diagonal", "values", "multiplicities"),
    [
        ([0.5, 0.5 + 1.5e-9], [0.5, 0.5 + 1.5e-9], [1, 1]),  # 1.5e-9 apart: above 1e-9·max(1, 0.5)
        ([3.0, 3.0 + 2.5e-9], [3.0], [2]),  # below 1e-9·3
        ([0.0, 1e-9], [0.0], [2]),  # exactly 1e-9·max(1, 1e-9) apart: equal
    ],
)
def test_eigenvalues_of_v_are_grouped_within_1e_9_times_the_largest_modulus(
    diagonal: list[float], values: list[float], multiplicities: list[int]
) -> None:
    mu, counts = grouped_eigenvalues(np.diag(diagonal))
    assert np.sort(mu.real).tolist() == pytest.approx(values, abs=1e-15) and np.all(mu.imag == 0)
    assert counts.tolist() == multiplicities


@pytest.mark.parametrize("causal", [False, True])
def test_field_on_a_batch_of_states_is_the_field_of_each_state(causal: bool) -> None:
    rng = np.random.default_rng(3)
    system = System(
        a_r=rng.standard_normal((2, 2)),
        alpha=rng.standard_normal(2),
        beta=rng.standard_normal(2),
        w=rng.standard_normal((3, 3)),
        v=rng.standard_normal((3, 3)),
        n_tokens=4,
        causal=causal,
    )
    states = 2.0 * rng.standard_normal((5, 2, 4, 3))
    np.testing.assert_allclose(field(system, states), [field(system, h) for h in states], rtol=1e-12, atol=1e-12)


def test_field_by_hand_for_two_tokens() -> None:
    # n = 1, α = β = 1, a_r = 1 (R = 0), d = 1, W = 1, V = 2: z = h, scores s_ij = h_i h_j, softmax over j,
    # dH/dt = 2·Σ_j softmax_j(h_i h_j)·h_j; causal: token 1 attends to itself only.
    system = System(np.ones((1, 1)), np.ones(1), np.ones(1), np.ones((1, 1)), 2 * np.ones((1, 1)), 2, False)
    h = np.array([[[1.0], [-2.0]]])
    e = np.exp
    row1 = (e(1.0) * 1 + e(-2.0) * -2) / (e(1.0) + e(-2.0))
    row2 = (e(-2.0) * 1 + e(4.0) * -2) / (e(-2.0) + e(4.0))
    np.testing.assert_allclose(field(system, h)[0, :, 0], [2 * row1, 2 * row2], rtol=1e-14)
    causal = System(np.ones((1, 1)), np.ones(1), np.ones(1), np.ones((1, 1)), 2 * np.ones((1, 1)), 2, True)
    np.testing.assert_allclose(field(causal, h)[0, :, 0], [2 * 1.0, 2 * row2], rtol=1e-14)


def test_speed_is_the_relative_field_norm_at_the_last_state() -> None:
    # One stream, dH/dt = r·H with r = 0.99e-4: ‖dH/dt‖/‖H‖ = r < 1e-4 at every state ("nontrivial" by the rule),
    # while the norm grows by p(0.0198) ≈ 1.02 per step of 200 and by e^1.98 ≈ 7.2 over the run: the speed is taken
    # at the last state relative to the last norm.
    run = rk4(linear_system([[1.0 + 0.99e-4]]), np.ones((1, 2, 2)), 20_000.0, 200.0, lambda f: None)
    assert run.norms[-1] / run.norms[0] == pytest.approx(rk4_factor(0.0198) ** 100, rel=1e-9)
    assert run.regime == "nontrivial"


def test_a_speed_of_exactly_1e_4_is_not_converged() -> None:
    assert _regime(np.arange(10.0), np.ones(10), 1e-4, None) == "undetermined"
