"""hyperconnections.token_dynamics's figure (service/estimators/hyperconnections_plot.py): every drawn number,
label and style, on hand-made results whose values are chosen here, so each expected value is known before the
figure is drawn; one figure of a real result model (not a dict)."""

import pytest
from matplotlib.colors import to_rgba

from service.estimators.hyperconnections import SPEC, TokenDynamicsParams, token_dynamics
from service.estimators.hyperconnections_plot import plot_token_dynamics
from service.registry import no_progress

EIGENVALUES = [{"re": -1.5, "im": 0.25}, {"re": 0.3, "im": -0.75}, {"re": -0.2, "im": 0.0}]
SIMULATION = {"regime": "oscillation", "norm_series": {"t": [0.0, 0.5, 1.5], "norm": [0.5, 2.0, 8.0]}}
SWEEP = [
    {"value": -1.0, "spectral_abscissa": -0.4},
    {"value": 0.0, "spectral_abscissa": 0.1},
    {"value": 1.0, "spectral_abscissa": -0.2},
]
CROSSINGS = [
    {"param": "beta[1]", "type": "static", "value": -0.25, "omega": None},
    {"param": "beta[1]", "type": "hopf", "value": 0.5, "omega": 1.5},
]


def result(simulation: dict | None = None, sweep: list | None = None, crossings: list | None = None) -> dict:
    return {
        "eigenvalues": EIGENVALUES,
        "linear_label": "static_unstable",
        "simulation": simulation,
        "sweep_curve": sweep,
        "crossings": crossings,
    }


def test_spectrum_panel_alone_scatters_the_eigenvalues_with_the_imaginary_axis() -> None:
    fig = plot_token_dynamics(result())
    assert len(fig.axes) == 1
    assert tuple(fig.get_size_inches()) == pytest.approx((4.2, 3.6), abs=1e-12)
    (ax,) = fig.axes
    (points,) = ax.collections
    assert points.get_offsets().tolist() == [[-1.5, 0.25], [0.3, -0.75], [-0.2, 0.0]]
    assert points.get_sizes().tolist() == [12.0]
    (axis,) = ax.lines
    assert list(axis.get_xdata()) == [0.0, 0.0] and list(axis.get_ydata()) == [0, 1]  # vertical, full height
    assert to_rgba(axis.get_color()) == to_rgba("0.6") and axis.get_linewidth() == 0.8
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Re λ", "Im λ")
    assert ax.get_title() == "spectrum at H = 0 (static_unstable)"


def test_three_panels_draw_the_norm_on_a_log_scale_and_the_sweep_with_its_crossings() -> None:
    fig = plot_token_dynamics(result(SIMULATION, SWEEP, CROSSINGS))
    assert tuple(fig.get_size_inches()) == pytest.approx((3 * 4.2, 3.6), abs=1e-12)
    spec_ax, norm_ax, sweep_ax = fig.axes
    assert [a.get_subplotspec().get_geometry() for a in fig.axes] == [(1, 3, i, i) for i in range(3)]  # one row
    assert spec_ax.get_title() == "spectrum at H = 0 (static_unstable)"
    (norm,) = norm_ax.lines
    assert list(norm.get_xdata()) == [0.0, 0.5, 1.5] and list(norm.get_ydata()) == [0.5, 2.0, 8.0]
    assert norm_ax.get_yscale() == "log" and norm_ax.get_xscale() == "linear"
    assert (norm_ax.get_xlabel(), norm_ax.get_ylabel(), norm_ax.get_title()) == ("t", "‖H(t)‖", "RK4: oscillation")
    curve, zero, static, hopf = sweep_ax.lines
    assert list(curve.get_xdata()) == [-1.0, 0.0, 1.0] and list(curve.get_ydata()) == [-0.4, 0.1, -0.2]
    assert list(zero.get_ydata()) == [0.0, 0.0] and list(zero.get_xdata()) == [0, 1]  # horizontal, full width
    assert to_rgba(zero.get_color()) == to_rgba("0.6") and zero.get_linewidth() == 0.8
    assert list(static.get_xdata()) == [-0.25, -0.25] and list(hopf.get_xdata()) == [0.5, 0.5]
    assert to_rgba(static.get_color()) == to_rgba("C2") and to_rgba(hopf.get_color()) == to_rgba("C3")
    assert static.get_linestyle() == hopf.get_linestyle() == "--"
    assert static.get_linewidth() == hopf.get_linewidth() == 1.0
    assert (sweep_ax.get_xlabel(), sweep_ax.get_ylabel()) == ("beta[1]", "max Re λ")
    assert sweep_ax.get_title() == "continuation"


def test_sweep_without_crossings_labels_the_axis_sweep_value_and_follows_the_spectrum() -> None:
    fig = plot_token_dynamics(result(sweep=SWEEP, crossings=[]))
    assert tuple(fig.get_size_inches()) == pytest.approx((2 * 4.2, 3.6), abs=1e-12)
    spec_ax, sweep_ax = fig.axes
    assert spec_ax.get_xlabel() == "Re λ"
    curve, zero = sweep_ax.lines
    assert list(curve.get_ydata()) == [-0.4, 0.1, -0.2] and list(zero.get_ydata()) == [0.0, 0.0]
    assert sweep_ax.get_xlabel() == "sweep value" and sweep_ax.get_title() == "continuation"


def test_one_crossing_names_the_axis_after_its_parameter() -> None:
    (_, sweep_ax) = plot_token_dynamics(result(sweep=SWEEP, crossings=CROSSINGS[1:])).axes
    (hopf,) = sweep_ax.lines[2:]
    assert list(hopf.get_xdata()) == [0.5, 0.5] and to_rgba(hopf.get_color()) == to_rgba("C3")
    assert sweep_ax.get_xlabel() == "beta[1]"


def test_simulation_without_sweep_is_the_second_and_last_panel() -> None:
    fig = plot_token_dynamics(result(simulation=SIMULATION))
    spec_ax, norm_ax = fig.axes
    assert spec_ax.get_xlabel() == "Re λ"
    assert norm_ax.get_title() == "RK4: oscillation" and norm_ax.get_yscale() == "log"


def test_the_layout_is_tightened() -> None:
    """Without tight_layout the first axes would start at matplotlib's default left margin, 0.125 of 12.6 in =
    1.6 in; tightened, only its tick labels and y label remain to the left (well under 1.26 in)."""
    ax = plot_token_dynamics(result(SIMULATION, SWEEP, CROSSINGS)).axes[0]
    assert ax.get_position().x0 < 0.1


def test_the_result_model_is_drawn_like_its_json() -> None:
    """A result model (not a dict): one stream, a_r = 1, V = −I, N = 2, d = 1: λ = a_r − 1 + p·μ = −1 (p = 1) and 0
    (p = 0), so two points at (−1, 0) and (0, 0); the label is marginal (max Re λ = 0)."""
    params = TokenDynamicsParams(n_streams=1, n_tokens=2, dim=1, a_r=[[1.0]], alpha=[1.0], beta=[1.0], simulate=False)
    res = token_dynamics(params, no_progress)
    fig = SPEC.plot(res)
    (ax,) = fig.axes
    assert sorted(map(tuple, ax.collections[0].get_offsets().tolist())) == [(-1.0, 0.0), (0.0, 0.0)]
    assert ax.get_title() == "spectrum at H = 0 (marginal)"
