"""hyperconnections.token_dynamics's result fields against runs whose solution is known in closed form, its shape
checks, and its cost formula term by term (the docstring of ``cost``).

Consensus state: when every token of every stream is the same vector, every attention row is uniform whatever W
is, so SA(Z) = Z·V and with V = −I and one stream dH/dt = (a_r − 1 − αβ)·H: ‖H(t)‖ = ‖H0‖·e^{(a_r − 1 − αβ)t}.
Rotation: two streams, A_r = I + [[0, −1], [1, 0]] (R = (A_r − I)ᵀ = [[0, 1], [−1, 0]]) and β = 0: H₁' = H₂,
H₂' = −H₁, a rotation of angular frequency 1 that keeps ‖H‖ and whose projection on H0 is ‖H0‖·cos t.
"""

import math

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators.hyperconnections import TokenDynamicsParams, cost, token_dynamics
from service.registry import no_progress

BASE = {"n_streams": 1, "n_tokens": 3, "dim": 2, "a_r": [[1.5]], "alpha": [1.0], "beta": [1.0]}
CONSENSUS = [[[0.3, -0.4]] * 3]  # ‖H0‖_F = √3 · 0.5


def run(**kw: object):
    return token_dynamics(TokenDynamicsParams(**{**BASE, **kw}), no_progress)


def rk4_factor(z: float) -> float:
    """One classical RK4 step multiplies the solution of y' = λy by 1 + z + z²/2 + z³/6 + z⁴/24, z = λ·dt."""
    return 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24


def test_consensus_run_decays_at_the_closed_form_rate_with_every_step_kept() -> None:
    """a_r = 1.5, αβ = 1: rate −0.5; t_max = 2, dt = 0.05: 40 steps, all 41 points kept, each ‖H0‖·R(−0.025)^k
    (and within RK4's 4e−9 of the exact e^{−t/2})."""
    sim = run(h0=CONSENSUS, t_max=2.0, dt=0.05).simulation
    t = np.array(sim.norm_series.t)
    assert t == pytest.approx(0.05 * np.arange(41), abs=1e-12)
    expected = math.sqrt(3) * 0.5 * rk4_factor(-0.025) ** np.arange(41)
    assert sim.norm_series.norm == pytest.approx(expected, rel=1e-13)
    assert sim.norm_series.norm == pytest.approx(math.sqrt(3) * 0.5 * np.exp(-0.5 * t), rel=4e-9)
    assert sim.final_norm == pytest.approx(expected[-1], rel=1e-13) and sim.final_norm == sim.norm_series.norm[-1]
    assert sim.t_end == pytest.approx(2.0, abs=1e-12)
    assert sim.regime == "collapse" and sim.frequency is None


def test_long_series_is_downsampled_to_1000_points_from_first_to_last_step() -> None:
    """1200 steps (t_max = 60): 1000 of the 1201 states, first and last included, each still on the closed form."""
    sim = run(h0=CONSENSUS, a_r=[[1.9]], t_max=60.0, dt=0.05).simulation
    t = np.array(sim.norm_series.t)
    assert t.size == 1000 and t[0] == 0.0 and t[-1] == pytest.approx(60.0, abs=1e-12)
    steps = t / 0.05
    assert steps == pytest.approx(np.round(steps), abs=1e-9) and np.all(np.diff(np.round(steps)) >= 1)
    assert np.diff(np.round(steps)).max() == 2  # 200 of the 1200 gaps skipped, none twice
    expected = math.sqrt(3) * 0.5 * rk4_factor(-0.1 * 0.05) ** np.round(steps)
    assert sim.norm_series.norm == pytest.approx(expected, rel=1e-12)
    assert sim.final_norm == sim.norm_series.norm[-1]


def test_rotation_is_an_oscillation_of_unit_frequency_at_constant_norm() -> None:
    h0 = [[[0.3, -0.4]] * 3, [[0.1, 0.2]] * 3]
    res = run(n_streams=2, a_r=[[1.0, -1.0], [1.0, 1.0]], alpha=[1.0, 1.0], beta=[0.0, 0.0], h0=h0, t_max=30.0)
    sim = res.simulation
    assert sim.regime == "oscillation"
    assert sim.frequency == pytest.approx(1.0, rel=1e-3)
    assert sim.final_norm == pytest.approx(math.sqrt(3 * (0.25 + 0.05)), rel=1e-6)


def test_default_initial_state_is_scaled_by_init_scale_and_drawn_from_init_seed() -> None:
    """The random H0 is init_scale times a seeded draw: doubling init_scale doubles ‖H(0)‖, the same seed repeats
    it, another seed does not; its norm is that of 6 standard normal draws times 0.1 (well inside [0.01, 1])."""
    a = run(t_max=0.1, dt=0.05).simulation.norm_series.norm[0]
    b = run(t_max=0.1, dt=0.05, init_scale=0.2).simulation.norm_series.norm[0]
    assert b == pytest.approx(2 * a, rel=1e-14)
    assert run(t_max=0.1, dt=0.05).simulation.norm_series.norm[0] == a
    assert run(t_max=0.1, dt=0.05, init_seed=1).simulation.norm_series.norm[0] != a
    assert 0.01 < a < 1.0


def test_default_w_is_the_identity() -> None:
    """W only enters the non-linear field, so it shows in a run from a non-consensus state."""
    h0 = [[[0.5, -0.2], [0.1, 0.4], [-0.3, 0.3]]]
    default = run(h0=h0, t_max=2.0).simulation
    eye = run(h0=h0, t_max=2.0, w=[[1.0, 0.0], [0.0, 1.0]]).simulation
    other = run(h0=h0, t_max=2.0, w=[[3.0, 0.0], [0.0, -2.0]]).simulation
    assert default.norm_series.norm == eye.norm_series.norm
    assert other.norm_series.norm[-1] != pytest.approx(default.norm_series.norm[-1], rel=1e-6)


def test_one_stream_reports_the_critical_a_r_and_no_blocks() -> None:
    """a_r = 1.5 > 1: the p = 0 modes (λ = 0.5, real) lead, so the zero state is statically unstable."""
    res = run(simulate=False)
    assert res.simulation is None and res.crossings is None and res.sweep_curve is None
    assert res.fd_residual is None and res.fd_jacobian_residual is None
    assert res.blocks is None and res.critical_a_r == 1.0
    assert res.linear_label == "static_unstable" and res.spectral_abscissa == 0.5 and res.hyperbolic


@pytest.mark.parametrize("n", [2, 3])
def test_several_streams_have_no_critical_a_r_and_only_two_have_blocks(n: int) -> None:
    res = run(n_streams=n, a_r=np.eye(n).tolist(), alpha=[1.0] * n, beta=[1.0] * n, simulate=False)
    assert res.critical_a_r is None
    assert (res.blocks is not None) == (n == 2)


def test_oscillatory_unstable_label() -> None:
    """One stream, V = [[0.5, 1], [−1, 0.5]] (μ = 0.5 ± i), a_r = 1: λ = 0 (p = 0) and 0.5 ± i (p = 1)."""
    res = run(a_r=[[1.0]], v=[[0.5, 1.0], [-1.0, 0.5]], simulate=False)
    assert res.spectral_abscissa == pytest.approx(0.5, abs=1e-15)
    assert res.linear_label == "oscillatory_unstable" and not res.hyperbolic


def test_sweep_curve_lists_every_grid_value() -> None:
    res = run(simulate=False, sweep={"target": "a_r[0][0]", "lo": 0.0, "hi": 2.0, "n_points": 5})
    assert [p.value for p in res.sweep_curve] == [0.0, 0.5, 1.0, 1.5, 2.0]
    # V = −I, αβ = 1: λ₀ = a_r − 1 and λ₁ = a_r − 2, so the abscissa is a_r − 1 and crosses at 1.
    assert [p.spectral_abscissa for p in res.sweep_curve] == pytest.approx([-1.0, -0.5, 0.0, 0.5, 1.0], abs=1e-15)
    assert [(c.param, c.type) for c in res.crossings] == [("a_r[0][0]", "static")]


def test_fd_check_is_allowed_up_to_300_state_entries() -> None:
    """n·N·d = 1·20·15 = 300 runs the check; 1·43·7 = 301 is refused before any work."""
    eye = np.eye(15).tolist()
    res = run(n_tokens=20, dim=15, w=eye, v=(-np.eye(15)).tolist(), simulate=False, fd_check=True)
    assert res.fd_residual < 1e-8 and res.fd_jacobian_residual < 1e-12
    with pytest.raises(InvalidInput) as err:
        run(n_tokens=43, dim=7, simulate=False, fd_check=True)
    assert err.value.loc == ("fd_check",)


@pytest.mark.parametrize(
    ("kw", "loc"),
    [
        ({"n_streams": 2, "a_r": [[1.0, 0.0], [1.0]], "alpha": [1.0, 1.0], "beta": [1.0, 1.0]}, ("a_r",)),
        ({"beta": [1.0, 1.0]}, ("beta",)),
        ({"w": [[1.0, 0.0], [0.0]]}, ("w",)),
        ({"w": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}, ("w",)),
        ({"h0": [[[0.1, 0.1]] * 3] * 2}, ("h0",)),
        ({"h0": [[[0.1, 0.1], [0.1], [0.1, 0.1]]]}, ("h0",)),
        ({"h0": [[[0.1, 0.1, 0.1]] * 3]}, ("h0",)),
    ],
)
def test_shapes_are_checked_against_n_streams_n_tokens_and_dim(kw: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        run(**kw)
    assert err.value.loc == loc


def field_work(n: int, big_n: int, d: int) -> int:
    return n * n * big_n * d + 2 * big_n * big_n * d + big_n * d * d + 3 * big_n * big_n + 100_000


def test_cost_of_the_causal_spectrum_sweep_and_fd_check() -> None:
    """cost's docstring: an eigensolve is 5e4 + 250·blocks·n³ (causal: N·d blocks, bidirectional 2d), a sweep
    n_points of them plus 40 per gap, the FD check 2m field evaluations and 30·m³ (m = nNd)."""
    p = {"n_streams": 2, "n_tokens": 5, "dim": 3, "a_r": np.eye(2).tolist(), "alpha": [1.0] * 2, "beta": [1.0] * 2}
    eig_causal = 50_000 + 250 * (5 * 3) * 8
    eig = 50_000 + 250 * (2 * 3) * 8
    assert cost(TokenDynamicsParams(**p, causal=True, simulate=False)) == eig_causal
    assert cost(TokenDynamicsParams(**p, simulate=False)) == eig
    sweep = {"target": "scale_v", "lo": 0.0, "hi": 1.0, "n_points": 7}
    assert cost(TokenDynamicsParams(**p, simulate=False, sweep=sweep)) == eig * (1 + 7 + 40 * 6)
    m = 2 * 5 * 3
    assert (
        cost(TokenDynamicsParams(**p, simulate=False, fd_check=True)) == eig + 2 * m * field_work(2, 5, 3) + 30 * m**3
    )
    # a run shorter than half a step still costs one RK4 step (four field evaluations)
    short = TokenDynamicsParams(**p, t_max=0.01, dt=0.1)
    assert cost(short) == eig + 4 * field_work(2, 5, 3)


def test_critical_a_r_takes_the_product_of_alpha_and_beta() -> None:
    """One stream, V = 0.5·I, α = 2, β = 3: the consensus block p = 1 gives αβ·μ = 3, so a_r^c = 1 − 3 = −2."""
    res = run(alpha=[2.0], beta=[3.0], v=[[0.5, 0.0], [0.0, 0.5]], simulate=False)
    assert res.critical_a_r == pytest.approx(-2.0, abs=1e-15)


@pytest.mark.parametrize(("mu", "abscissa"), [(-2e-9, -1e-9), (1e-9, 1e-9)])
def test_an_abscissa_of_exactly_1e_9_in_size_is_marginal_and_not_hyperbolic(mu: float, abscissa: float) -> None:
    """Causal, N = 2, d = 1, a_r = 1, αβ = 1: λ = μ/t for t = 1, 2 (p = 1/t), both exact in floating point; the
    labels' bounds are |max Re λ| ≤ 1e−9 for marginal and min |Re λ| > 1e−9 for hyperbolic."""
    res = run(n_tokens=2, dim=1, a_r=[[1.0]], v=[[mu]], causal=True, simulate=False)
    assert res.spectral_abscissa == abscissa
    assert res.linear_label == "marginal" and not res.hyperbolic


def test_a_leading_pair_with_imaginary_part_1e_9_is_static() -> None:
    """V = [[0.5, 1e−9], [−1e−9, 0.5]] (μ = 0.5 ± 1e−9·i exactly), a_r = 1, αβ = 1: the leading pair is unstable
    with |Im λ| = 1e−9, not above the 1e−9 that makes it oscillatory."""
    res = run(a_r=[[1.0]], v=[[0.5, 1e-9], [-1e-9, 0.5]], simulate=False)
    assert res.spectral_abscissa == 0.5 and res.linear_label == "static_unstable"
