"""snn's figures and overlay curves: what each line and bar draws, its style and the axes' text, on small results
whose values are set by hand."""

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from service.estimators import snn
from service.registry import no_progress

# T = 3, B = 1, one layer of 2 units, ϑ = 1: offsets u = v − 1 per step (0.05, 0.4), (−0.3, 2.0), (0.0, −0.02).
V = [[[[1.05, 1.4]], [[0.7, 3.0]], [[1.0, 0.98]]]]


@pytest.fixture(scope="module")
def tail() -> snn.ThresholdTailResult:
    return snn.threshold_tail(snn.ThresholdTailParams(v=V, eps=[0.1, 0.5], surrogate="rect"), no_progress)


def test_threshold_tail_figure(tail: snn.ThresholdTailResult) -> None:
    # band_frac(0.1) per step: 1/2, 0, 2/2; band_frac(0.5): 2/2, 1/2, 2/2.
    # rect(a = 1): κ(u) = max(0, 1 − 2|u|): (0.9 + 0.2)/2, (0.4 + 0)/2, (1 + 0.96)/2.
    assert tail.per_time.band_frac == [[0.5, 0.0, 1.0], [1.0, 0.5, 1.0]]
    assert tail.per_time.kernel_tail == pytest.approx([0.55, 0.2, 0.98], rel=1e-12)
    fig = snn.threshold_tail_plot(tail)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.0, 4.0))
    (ax,) = fig.axes
    lines = ax.lines
    assert len(lines) == 3
    for line, row in zip(lines[:2], tail.per_time.band_frac, strict=True):
        assert list(line.get_xdata()) == [1, 2, 3] and list(line.get_ydata()) == row
    assert [line.get_label() for line in lines] == ["band_frac(ε=0.1)", "band_frac(ε=0.5)", "kernel_tail (rect)"]
    kern = lines[2]
    assert list(kern.get_xdata()) == [1, 2, 3] and list(kern.get_ydata()) == tail.per_time.kernel_tail
    assert kern.get_linestyle() == "--" and to_rgba(kern.get_color()) == to_rgba("k")
    assert lines[0].get_linestyle() == "-"
    assert ax.get_xlabel() == "time step t" and ax.get_ylabel() == "share of offsets u = v − ϑ"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [line.get_label() for line in lines]
    assert legend.get_texts()[0].get_fontsize() == 8


def test_threshold_tail_overlay_curves(tail: snn.ThresholdTailResult) -> None:
    spec = {s.name: s for s in snn.SPECS}["snn.threshold_tail"]
    assert spec.plot is snn.threshold_tail_plot and spec.overlay is snn.threshold_tail_curves
    curves = snn.threshold_tail_curves(tail)
    assert (curves.x_label, curves.y_label) == ("time step t", "share of offsets u = v − ϑ")
    assert (curves.x_log, curves.y_log) == (False, False)
    assert [(c.label, list(c.x), list(c.y)) for c in curves.curves] == [
        ("band_frac(ε=0.1)", [1, 2, 3], [0.5, 0.0, 1.0]),
        ("band_frac(ε=0.5)", [1, 2, 3], [1.0, 0.5, 1.0]),
        ("kernel_tail (rect)", [1, 2, 3], tail.per_time.kernel_tail),
    ]


def test_gradient_mismatch_figure_groups_three_bars_per_layer() -> None:
    res = snn.gradient_mismatch(
        snn.GradientMismatchParams(sizes=[3, 4, 2], time_steps=2, batch_size=3, seed=1), no_progress
    )
    spec = {s.name: s for s in snn.SPECS}["snn.gradient_mismatch"]
    assert spec.plot is snn.gradient_mismatch_plot and spec.overlay is None
    fig = snn.gradient_mismatch_plot(res)
    assert tuple(fig.get_size_inches()) == pytest.approx((6.0, 4.0))
    (ax,) = fig.axes
    bars = ax.patches
    assert len(bars) == 6  # three series × two layers, series by series
    heights = [[row.norm_g_f, row.norm_grad_lf, row.mismatch_abs] for row in res.per_layer]
    for j in range(3):
        for i, layer in enumerate((1, 2)):
            bar = bars[2 * j + i]
            assert bar.get_height() == heights[i][j]
            assert bar.get_width() == pytest.approx(0.27)
            # centred at l − 0.27, l, l + 0.27
            assert bar.get_x() + bar.get_width() / 2 == pytest.approx(layer + (j - 1) * 0.27, abs=1e-12)
    assert list(ax.get_xticks()) == [1.0, 2.0]
    assert ax.get_xlabel() == "layer l" and ax.get_ylabel() == "gradient norm on (W^l, b^l)"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["‖g_F‖", "‖∇L_F‖", "‖g_F − ∇L_F‖"]
    assert legend.get_texts()[0].get_fontsize() == 8
    assert np.all(np.array(heights) >= 0)
