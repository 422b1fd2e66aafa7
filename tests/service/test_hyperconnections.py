"""hyperconnections.token_dynamics: closed-form spectrum vs finite differences, thresholds, crossings, regimes."""

import math

import numpy as np
import pydantic
import pytest

from service.errors import Cancelled, InvalidInput
from service.estimators.hyperconnections import (
    HARD_CAP,
    SPEC,
    SYNC_BUDGET,
    TokenDynamicsParams,
    cost,
    token_dynamics,
)
from service.estimators.hyperconnections_ode import System, field, spectrum
from service.registry import no_progress

HOPF_AR = [[1.0, -1.0], [1.0, 1.0]]
"""A_r = I + [[s, −1], [1, s]] at s = 0; R = (A_r − I)^T has eigenvalues s ± i."""
TWO = {"alpha": [1.0, 0.5], "beta": [0.5, 0.5]}


def run(**kw: object):
    base = {"n_streams": 1, "n_tokens": 4, "dim": 2, "a_r": [[1.0]], "alpha": [1.0], "beta": [1.0]}
    return token_dynamics(TokenDynamicsParams(**{**base, **kw}), no_progress)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_closed_form_spectrum_equals_finite_difference_spectrum(n: int, causal: bool) -> None:
    rng = np.random.default_rng(10 * n + causal)
    res = run(
        n_streams=n,
        a_r=rng.normal(size=(n, n)).tolist(),
        alpha=rng.normal(size=n).tolist(),
        beta=rng.normal(size=n).tolist(),
        w=rng.normal(size=(2, 2)).tolist(),
        v=rng.normal(size=(2, 2)).tolist(),
        causal=causal,
        simulate=False,
        fd_check=True,
    )
    # The reference measured 5e-13 .. 2e-12 with its FD step (docs/hyperconnections.md, "Validation against the
    # measured figures"); ours (central, 1e-7 on an odd field) gives ≤ 3e-14.
    assert res.fd_residual < 1e-10
    assert res.fd_jacobian_residual < 1e-12  # the odd field: central differences exact up to O(1e-14)
    assert sum(e.multiplicity for e in res.eigenvalues) == n * 4 * 2


def test_fd_jacobian_equals_kronecker_form_where_dense_spectra_are_ill_conditioned() -> None:
    # Causal N = 64: the averaging matrix is far from normal, so dense eigenvalues carry errors near 1e-3, but the
    # Jacobian itself matches R ⊗ I + βαᵀ ⊗ (P0 ⊗ Vᵀ) entrywise.
    rng = np.random.default_rng(0)
    res = run(
        n_streams=4,
        n_tokens=64,
        dim=1,
        a_r=(np.eye(4) + 0.3 * rng.normal(size=(4, 4))).tolist(),
        alpha=rng.normal(size=4).tolist(),
        beta=rng.normal(size=4).tolist(),
        w=[[0.7]],
        v=[[-1.3]],
        causal=True,
        simulate=False,
        fd_check=True,
    )
    assert res.fd_jacobian_residual < 1e-12
    assert sum(e.multiplicity for e in res.eigenvalues) == 4 * 64


def test_spectrum_is_invariant_under_a_relabelling_of_the_streams() -> None:
    rng = np.random.default_rng(3)
    a_r, alpha, beta = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
    w, v = rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    perm = np.array([2, 0, 1])
    one = spectrum(System(a_r, alpha, beta, w, v, 5, True)).values
    two = spectrum(System(a_r[np.ix_(perm, perm)], alpha[perm], beta[perm], w, v, 5, True)).values
    assert np.sort_complex(one) == pytest.approx(np.sort_complex(two), abs=1e-12)


def test_field_is_odd_so_the_run_from_minus_h0_has_the_same_norms() -> None:
    rng = np.random.default_rng(0)
    system = System(np.array([[1.3]]), np.ones(1), np.ones(1), np.eye(2), -np.eye(2), 4, False)
    h = rng.normal(size=(1, 4, 2))
    assert field(system, -h) == pytest.approx(-field(system, h), abs=1e-15)
    h0 = (0.1 * rng.normal(size=(1, 4, 2))).tolist()
    minus = (-np.asarray(h0)).tolist()
    a = run(a_r=[[1.3]], h0=[h0[0]], t_max=20.0)
    b = run(a_r=[[1.3]], h0=[minus[0]], t_max=20.0)
    assert a.simulation.norm_series.norm == pytest.approx(b.simulation.norm_series.norm, rel=1e-12)


def test_one_stream_thresholds_closed_form_and_continuation() -> None:
    # V = −I: zero-mean modes cross at a_r = 1 (pitchfork); V = +0.5 I: consensus at 1 − αβμ = 0.5.
    for v, expected in (([[-1.0, 0.0], [0.0, -1.0]], 1.0), ([[0.5, 0.0], [0.0, 0.5]], 0.5)):
        res = run(v=v, simulate=False, sweep={"target": "a_r[0][0]", "lo": 0.1, "hi": 1.7, "n_points": 17})
        assert res.critical_a_r == pytest.approx(expected, abs=1e-15)
        assert len(res.crossings) == 1
        c = res.crossings[0]
        assert c.type == "static" and c.omega is None
        assert c.value == pytest.approx(expected, abs=1e-10)
    # Causal, V = −I: λ = a_r − 1 − 1/t, t = 1..4, so a_r^c = 1 + 1/4 and the zero state is hyperbolic at a_r = 1.
    res = run(causal=True, simulate=False, sweep={"target": "a_r[0][0]", "lo": 0.5, "hi": 2.0, "n_points": 7})
    assert res.critical_a_r == pytest.approx(1.25, abs=1e-15)
    assert res.crossings[0].value == pytest.approx(1.25, abs=1e-10)
    assert res.hyperbolic and res.linear_label == "stable"
    # The sign of αβ enters before the max: α = −1, V = −I gives +1 on the consensus mode, so a_r^c = 0.
    res = run(alpha=[-1.0], simulate=False, sweep={"target": "a_r[0][0]", "lo": -0.5, "hi": 0.5, "n_points": 4})
    assert res.critical_a_r == 0.0 and res.crossings[0].value == pytest.approx(0.0, abs=1e-10)
    # Bidirectional with a_r = 1: the N − 1 zero-mean directions sit at exactly 0 (non-hyperbolic).
    res = run(simulate=False)
    assert not res.hyperbolic and res.linear_label == "marginal" and res.spectral_abscissa == 0.0
    zero = [e for e in res.eigenvalues if e.p == 0.0]
    assert [e.multiplicity for e in zero] == [3 * 2]


def test_hopf_crossing_at_s_zero_with_unit_frequency() -> None:
    # Sweep a_r[0][0] = 1 + s with a_r[1][1] = 1: R = [[s, 1], [−1, 0]], tr = s, det = 1, so a Hopf at s = 0, ω = 1.
    # The p = 1 block R − βα^T (V = −I) crosses only at s = 0.75, outside the grid.
    res = run(n_streams=2, a_r=HOPF_AR, **TWO, simulate=False, sweep={"target": "a_r[0][0]", "lo": 0.5, "hi": 1.5})
    assert len(res.crossings) == 1
    c = res.crossings[0]
    assert c.type == "hopf" and c.param == "a_r[0][0]"
    assert c.value == pytest.approx(1.0, abs=1e-10)
    assert c.omega == pytest.approx(1.0, abs=1e-9)
    # The reference's joint s on both diagonal entries: R = [[s, 1], [−1, s]] has eigenvalues s ± i.
    for s, label in ((-1e-6, "stable"), (1e-10, "marginal"), (1e-6, "oscillatory_unstable")):
        a_r = [[1 + s, -1.0], [1.0, 1 + s]]
        res = run(n_streams=2, a_r=a_r, **TWO, simulate=False)
        assert res.spectral_abscissa == pytest.approx(s, abs=1e-15)
        assert res.linear_label == label
    block0 = next(b for b in res.blocks if b.p == 0.0)
    assert block0.trace_re == pytest.approx(2e-6, abs=1e-15) and block0.det_re == pytest.approx(1 + 1e-12, abs=1e-15)


def test_static_crossing_at_minus_0_08_is_the_det_zero_root() -> None:
    # A_r = I + [[s, 0.2], [0.2, −0.5]]: det of the p = 0 block = −0.5 s − 0.04, zero at s = −0.08.
    res = run(
        n_streams=2,
        a_r=[[1.0, 0.2], [0.2, 0.5]],
        **TWO,
        simulate=False,
        sweep={"target": "a_r[0][0]", "lo": 0.5, "hi": 1.3, "n_points": 41},
    )
    assert len(res.crossings) == 1
    c = res.crossings[0]
    assert c.type == "static" and c.omega is None
    assert c.value - 1.0 == pytest.approx(-0.08, abs=1e-10)
    block0 = next(b for b in res.blocks if b.p == 0.0)
    assert block0.det_re == pytest.approx(-0.04, abs=1e-15) and block0.trace_re == pytest.approx(-0.5, abs=1e-15)
    assert block0.multiplicity == 3 * 2 and block0.det_im == 0.0


@pytest.fixture(scope="module")
def one_stream() -> dict[float, object]:
    return {a: run(a_r=[[a]]).simulation for a in (0.8, 1.3, 1.9, 2.5)}


@pytest.mark.slow
def test_one_stream_regime_table(one_stream: dict) -> None:
    # docs/hyperconnections.md, "Validation against the measured figures": N = 4, d = 2, W = I, V = −I,
    # α = β = 1, H0 = 0.1·randn (seed 0), dt = 0.05, T = 150.
    assert one_stream[0.8].regime == "collapse" and one_stream[0.8].final_norm < 1e-6
    assert one_stream[1.3].regime == "nontrivial"
    assert one_stream[1.3].final_norm == pytest.approx(1.57, abs=0.005)
    assert one_stream[1.9].regime == "nontrivial"
    assert one_stream[1.9].final_norm == pytest.approx(3.43, abs=0.005)
    div = one_stream[2.5]
    assert div.regime == "divergence" and div.final_norm > 1e6
    assert div.t_end == pytest.approx(27.7, abs=0.1)  # the time depends on the 1e6 cap
    assert all(s.t_end == 150.0 for a, s in one_stream.items() if a != 2.5)


@pytest.mark.slow
def test_two_stream_regimes() -> None:
    runs = {}
    for s in (-0.05, 0.05, 0.3):
        a_r = [[1 + s, -1.0], [1.0, 1 + s]]
        runs[s] = run(n_streams=2, a_r=a_r, **TWO).simulation
    decay = runs[-0.05]
    assert decay.regime == "collapse"
    t, norm = np.array(decay.norm_series.t), np.log(decay.norm_series.norm)
    late = t > 75
    assert np.polyfit(t[late], norm[late], 1)[0] == pytest.approx(-0.05, abs=0.005)
    assert runs[0.05].regime == "oscillation" and runs[0.3].regime == "oscillation"
    assert runs[0.05].final_norm == pytest.approx(1.3, abs=0.05)
    assert runs[0.3].final_norm == pytest.approx(3.59, abs=0.02)  # errata: seed 0's attractor (3.93 for seeds 1, 5, 7)
    assert runs[0.05].frequency == pytest.approx(1.0, abs=0.05)
    other = run(n_streams=2, a_r=[[1.3, -1.0], [1.0, 1.3]], **TWO, init_seed=1).simulation
    assert other.regime == "oscillation" and other.final_norm == pytest.approx(3.93, abs=0.02)  # the second attractor


@pytest.mark.slow
def test_series_downsampled_and_plot_draws_it(one_stream: dict) -> None:
    sim = one_stream[1.3]
    assert len(sim.norm_series.t) == 1000 and sim.norm_series.t[0] == 0.0 and sim.norm_series.t[-1] == 150.0
    assert sim.norm_series.norm[-1] == sim.final_norm
    res = run(a_r=[[1.3]], t_max=10.0, sweep={"target": "scale_v", "lo": -2.0, "hi": 1.0, "n_points": 7})
    fig = SPEC.plot(res)
    spec_ax, norm_ax, sweep_ax = fig.axes
    assert norm_ax.lines[0].get_ydata().tolist() == res.simulation.norm_series.norm
    assert sweep_ax.lines[0].get_ydata().tolist() == [p.spectral_abscissa for p in res.sweep_curve]
    assert len(spec_ax.collections[0].get_offsets()) == len(res.eigenvalues)
    # a_r = 1.3, V = s·(−I): zero-mean modes at +0.3 always; the consensus mode 0.3 − s is the max for s < 0.
    assert [p.spectral_abscissa for p in res.sweep_curve] == pytest.approx([2.3, 1.8, 1.3, 0.8, 0.3, 0.3, 0.3])
    assert res.crossings == []


@pytest.mark.parametrize(
    ("kw", "loc"),
    [
        ({"a_r": [[1.0, 0.0]]}, ("a_r",)),
        ({"alpha": [1.0, 1.0]}, ("alpha",)),
        ({"v": [[1.0]]}, ("v",)),
        ({"h0": [[[0.1, 0.1]] * 3]}, ("h0",)),
        ({"fd_check": True, "n_tokens": 64, "dim": 8}, ("fd_check",)),
        ({"sweep": {"target": "beta[1]", "lo": 0.0, "hi": 1.0}}, ("sweep", "target")),
        ({"sweep": {"target": "scale_v", "lo": 1.0, "hi": 1.0}}, ("sweep", "hi")),
    ],
)
def test_inconsistent_inputs_name_the_field(kw: dict, loc: tuple) -> None:
    with pytest.raises(InvalidInput) as err:
        run(**kw)
    assert err.value.loc == loc


@pytest.mark.parametrize(
    "kw",
    [
        {"a_r": [[math.nan]]},
        {"alpha": [math.inf]},
        {"n_tokens": 65},
        {"dim": 33},
        {"dt": 0.5},
        {"sweep": {"target": "gamma[0]", "lo": 0.0, "hi": 1.0}},
        {"a_r": [[1e4]]},
    ],
)
def test_schema_rejects(kw: dict) -> None:
    base = {"n_streams": 1, "n_tokens": 4, "dim": 2, "a_r": [[1.0]], "alpha": [1.0], "beta": [1.0]}
    with pytest.raises(pydantic.ValidationError):
        TokenDynamicsParams(**{**base, **kw})


def test_cost_budget_and_cap() -> None:
    small = TokenDynamicsParams(n_streams=1, n_tokens=4, dim=2, a_r=[[1.3]], alpha=[1.0], beta=[1.0])
    # 3000 steps × 4 × (n²Nd + 2N²d + Nd² + 3N² + 1e5) + one eigensolve: synchronous (≈ 0.4 s here).
    assert cost(small) == pytest.approx(3000 * 4 * (8 + 64 + 16 + 48 + 100_000) + 50_000 + 250 * 4, rel=1e-12)
    assert cost(small) < SYNC_BUDGET
    big = TokenDynamicsParams(
        n_streams=4, n_tokens=64, dim=32, a_r=np.eye(4).tolist(), alpha=[1.0] * 4, beta=[1.0] * 4, t_max=1000.0, dt=1e-3
    )
    assert cost(big) > HARD_CAP
    assert SYNC_BUDGET < cost(big.model_copy(update={"t_max": 150.0, "dt": 0.05})) < HARD_CAP


def test_overflowing_run_is_a_divergence_with_a_finite_record() -> None:
    res = run(a_r=[[1000.0]], alpha=[1000.0], beta=[1000.0], init_scale=1000.0, t_max=1.0, dt=0.1)
    sim = res.simulation
    assert sim.regime == "divergence" and sim.t_end == pytest.approx(0.1) and sim.final_norm > 1e6
    assert all(math.isfinite(x) for x in sim.norm_series.norm)


def test_long_work_reports_progress_and_stops_on_cancel() -> None:
    seen: list[tuple[float, str]] = []

    def cancel_at_half(fraction: float, message: str = "") -> None:
        seen.append((fraction, message))
        if message == "rk4" and fraction >= 0.5:
            raise Cancelled

    params = TokenDynamicsParams(
        n_streams=1,
        n_tokens=4,
        dim=2,
        a_r=[[1.3]],
        alpha=[1.0],
        beta=[1.0],
        t_max=20.0,
        sweep={"target": "a_r[0][0]", "lo": 0.5, "hi": 1.5, "n_points": 5},
    )
    with pytest.raises(Cancelled):
        token_dynamics(params, cancel_at_half)
    sweep = [f for f, m in seen if m == "sweep"]
    assert sweep[-1] == 1.0 and sweep == sorted(sweep)
    assert [f for f, m in seen if m == "rk4"][-1] == 0.5  # 400 steps, reports every 8
