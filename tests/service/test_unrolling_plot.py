"""unrolling.jacobian_error's figure and overlay curves: what each line draws, its style, the axes' text, for a
problem with J* ≠ 0 (relative errors and bounds) and one with J* = 0 (absolute errors, no bounds)."""

import numpy as np
import pytest
from matplotlib import rcParams
from matplotlib.colors import to_rgba
from matplotlib.font_manager import FontProperties

from service.estimators.unrolling import SPEC, JacobianErrorParams, jacobian_error
from service.estimators.unrolling_plot import jacobian_error_curves, plot_jacobian_error
from service.registry import no_progress

# H = diag(2, 1), h = 0.5: L = 2, μ = 1, κ = 2, ρ = max(|1 − 0.5·1|, |1 − 0.5·2|) = 0.5.
H = [[2.0, 0.0], [0.0, 1.0]]
RELATIVE_TITLE = "h = 0.5, κ = 2, ρ = 0.5000 (dashed: bound)"


def run(b: list[float], k0_list: list[int], x0: list[float] | None = None):
    problem = {"kind": "quadratic", "h": H, "dh": np.eye(2).tolist(), "b": b, "db": [0.0, 0.0]}
    params = JacobianErrorParams(problem=problem, step=0.5, iterations=6, k0_list=k0_list, x0=x0)
    return jacobian_error(params, no_progress)


@pytest.fixture(scope="module")
def relative():
    # b = (1/2, 1/2): x* = (1/4, 1/2), J* = −H⁻¹x* = (−1/8, −1/2): 0 < ‖J*‖ < 1.
    return run([0.5, 0.5], [0, 2])


@pytest.fixture(scope="module")
def absolute():
    # b = 0, ∂b = 0: x* = 0 and J* = 0, so only absolute errors exist; x0 ≠ 0 makes them non-zero.
    return run([0.0, 0.0], [0, 3], x0=[1.0, -1.0])


def test_relative_figure_draws_each_error_curve_and_its_dashed_bound(relative) -> None:
    assert relative.j_star_norm == pytest.approx(np.hypot(0.125, 0.5), rel=1e-12)
    fig = plot_jacobian_error(relative)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 4.2))
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = ax.lines
    assert len(lines) == 4  # error, bound per k0
    for i, curve in enumerate(relative.curves):
        err, bound = lines[2 * i], lines[2 * i + 1]
        assert list(err.get_xdata()) == curve.t and list(bound.get_xdata()) == curve.t
        assert list(err.get_ydata()) == curve.rel_error and list(bound.get_ydata()) == curve.bound
        assert to_rgba(err.get_color()) == to_rgba(f"C{i}") == to_rgba(bound.get_color())
        assert err.get_linestyle() == "-" and bound.get_linestyle() == "--"
        assert err.get_linewidth() == rcParams["lines.linewidth"] and bound.get_linewidth() == 0.8
        assert err.get_label() == f"k0 = {curve.k0}" and bound.get_label().startswith("_")  # no legend entry
    assert ax.get_xlabel() == "iteration t"
    assert ax.get_ylabel() == "‖J_t − J*‖ / ‖J*‖"
    assert ax.get_title() == RELATIVE_TITLE
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["k0 = 0", "k0 = 2"]
    assert legend.get_texts()[0].get_fontsize() == FontProperties(size="small").get_size_in_points()
    # tight_layout moved the axes off the default subplot box
    default = (rcParams["figure.subplot.left"], rcParams["figure.subplot.bottom"])
    assert (ax.get_position().x0, ax.get_position().y0) != pytest.approx(default, abs=1e-3)


def test_the_result_as_json_dict_draws_the_same_figure(relative) -> None:
    fig = plot_jacobian_error(relative.model_dump(mode="json"))
    (ax,) = fig.axes
    assert [list(line.get_ydata()) for line in ax.lines] == [y for c in relative.curves for y in (c.rel_error, c.bound)]
    assert ax.get_title() == RELATIVE_TITLE
    assert SPEC.plot is plot_jacobian_error and SPEC.overlay is jacobian_error_curves


def test_absolute_figure_when_j_star_is_zero(absolute) -> None:
    assert absolute.j_star_norm == 0.0 and absolute.curves[0].rel_error is None
    (ax,) = plot_jacobian_error(absolute).axes
    assert len(ax.lines) == 2  # no bounds
    for i, (line, curve) in enumerate(zip(ax.lines, absolute.curves, strict=True)):
        assert list(line.get_xdata()) == curve.t and list(line.get_ydata()) == curve.abs_error
        assert to_rgba(line.get_color()) == to_rgba(f"C{i}") and line.get_label() == f"k0 = {curve.k0}"
    assert ax.get_ylabel() == "‖J_t − J*‖"
    assert ax.get_title().startswith("h = 0.5, κ = 2, ρ = 0.5000")


def test_colours_cycle_after_ten_curves() -> None:
    res = run([1.0, 1.0], [0, 1, 2, 3, 4, 5], x0=None)
    many = res.model_dump()
    many["curves"] = [many["curves"][i % 6] | {"k0": i} for i in range(12)]
    (ax,) = plot_jacobian_error(many).axes
    colours = [to_rgba(line.get_color()) for line in ax.lines[::2]]
    assert colours[10:] == [to_rgba("C0"), to_rgba("C1")] and len(set(colours[:10])) == 10


def test_overlay_curves(relative, absolute) -> None:
    rel = jacobian_error_curves(relative)
    assert (rel.x_label, rel.y_label, rel.x_log, rel.y_log) == ("iteration t", "‖J_t − J*‖ / ‖J*‖", True, True)
    assert [(c.label, list(c.x), list(c.y)) for c in rel.curves] == [
        (f"k0 = {c.k0}", c.t, c.rel_error) for c in relative.curves
    ]
    ab = jacobian_error_curves(absolute)
    assert (ab.x_label, ab.y_label, ab.x_log, ab.y_log) == ("iteration t", "‖J_t − J*‖", True, True)
    assert [(c.label, list(c.x), list(c.y)) for c in ab.curves] == [
        ("k0 = 0", absolute.curves[0].t, absolute.curves[0].abs_error),
        ("k0 = 3", absolute.curves[1].t, absolute.curves[1].abs_error),
    ]
