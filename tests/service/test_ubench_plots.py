"""U-Bench figures (service/estimators/ubench_plots.py): every drawn number, label and style checked on hand-made
results, so each expected value is known before the figure is drawn (written for the mutation run's survivors,
docs/testing.md)."""

from types import SimpleNamespace

import numpy as np
import pytest

from service.estimators.ubench_plots import friedman_plot, seg_metrics_plot
from tests.service.colors import rgba


def seg_result(ious: list[float], dices: list[float]) -> SimpleNamespace:
    """A seg-metrics result with chosen per-case IoU/Dice; the means are chosen apart from the cases' means."""
    cases = [SimpleNamespace(iou=i, dice=d) for i, d in zip(ious, dices, strict=True)]
    return SimpleNamespace(cases=cases, mean=SimpleNamespace(iou=0.31, dice=0.47))


def test_seg_metrics_plot_draws_iou_left_and_dice_right_of_each_case() -> None:
    """Bars of width 0.4 centred at case − 0.2 (IoU) and case + 0.2 (Dice): left edges at c − 0.4 and c."""
    fig = seg_metrics_plot(seg_result([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]))
    (ax,) = fig.axes
    iou, dice = ax.containers
    assert (iou.get_label(), dice.get_label()) == ("IoU", "Dice")
    assert [p.get_height() for p in iou] == [0.1, 0.2, 0.3]
    assert [p.get_height() for p in dice] == [0.4, 0.5, 0.6]
    assert [p.get_x() for p in iou] == pytest.approx([-0.4, 0.6, 1.6], abs=1e-12)
    assert [p.get_x() for p in dice] == pytest.approx([0.0, 1.0, 2.0], abs=1e-12)
    assert [p.get_width() for p in (*iou, *dice)] == pytest.approx([0.4] * 6, abs=1e-12)
    assert [p.get_y() for p in (*iou, *dice)] == [0.0] * 6
    assert {rgba(p.get_facecolor()) for p in iou} == {rgba("C0")}  # matplotlib's colour cycle, in order
    assert {rgba(p.get_facecolor()) for p in dice} == {rgba("C1")}


def test_seg_metrics_plot_draws_the_means_as_dashed_lines_in_the_bar_colours() -> None:
    (ax,) = seg_metrics_plot(seg_result([0.1, 0.2, 0.3], [0.4, 0.5, 0.6])).axes
    iou_mean, dice_mean = ax.lines
    assert list(iou_mean.get_ydata()) == [0.31, 0.31] and list(dice_mean.get_ydata()) == [0.47, 0.47]
    assert list(iou_mean.get_xdata()) == [0, 1] == list(dice_mean.get_xdata())  # across the whole axes
    assert rgba(iou_mean.get_color()) == rgba("C0") and rgba(dice_mean.get_color()) == rgba("C1")
    assert iou_mean.get_linestyle() == dice_mean.get_linestyle() == "--"
    assert iou_mean.get_linewidth() == dice_mean.get_linewidth() == 1.0


def test_seg_metrics_plot_axes_labels_limits_ticks_and_legend() -> None:
    (ax,) = seg_metrics_plot(seg_result([0.1, 0.2, 0.3], [0.4, 0.5, 0.6])).axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("case", "score")
    assert ax.get_ylim() == (0.0, 1.05)
    assert list(ax.get_xticks()) == [0, 1, 2]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["IoU", "Dice"]
    assert [t.get_fontsize() for t in legend.get_texts()] == [8.0, 8.0]


def test_seg_metrics_plot_of_a_total_miss_keeps_the_score_axis_from_0_to_1_05() -> None:
    """Every IoU, Dice and mean 0: the axis still starts at 0 (matplotlib alone would pad it below 0)."""
    result = seg_result([0.0, 0.0], [0.0, 0.0])
    result.mean = SimpleNamespace(iou=0.0, dice=0.0)
    (ax,) = seg_metrics_plot(result).axes
    assert ax.get_ylim() == (0.0, 1.05)


@pytest.mark.parametrize(("n", "width"), [(1, 4.0), (8, 4.0), (9, 4.25), (12, 5.0)])
def test_seg_metrics_plot_width_grows_a_quarter_inch_per_case_past_eight(n: int, width: float) -> None:
    """Width max(4, 0.25·n + 2) inches, height 3.5: 4 up to 8 cases, then 4.25 at 9 and 5 at 12."""
    fig = seg_metrics_plot(seg_result([0.5] * n, [0.5] * n))
    assert tuple(fig.get_size_inches()) == (width, 3.5)


def test_seg_metrics_plot_is_laid_out_tightly() -> None:
    """tight_layout moves the axes off matplotlib's default subplot box (left 0.125, bottom 0.11)."""
    (ax,) = seg_metrics_plot(seg_result([0.1, 0.2], [0.3, 0.4])).axes
    box = ax.get_position()
    assert box.x0 != pytest.approx(0.125, abs=1e-3) and box.y0 != pytest.approx(0.11, abs=1e-3)


def friedman_result(**kw: object) -> SimpleNamespace:
    """Four models with unsorted average ranks; the second model's name has a line break."""
    base = {
        "n_models": 4,
        "avg_ranks": [2.5, 1.25, 4.0, 2.25],
        "models": ["alpha", "be\nta", "gamma", "delta"],
        "cd": 1.2345678,
        "chi2": 7.654321,
        "p": 0.01234567,
    }
    return SimpleNamespace(**{**base, **kw})


def test_friedman_plot_draws_the_ranks_sorted_as_black_dots_on_the_axis() -> None:
    (ax,) = friedman_plot(friedman_result()).axes
    dots = ax.lines[0]
    assert list(dots.get_xdata()) == [1.25, 2.25, 2.5, 4.0]
    assert list(dots.get_ydata()) == [0.0, 0.0, 0.0, 0.0]
    assert (dots.get_marker(), dots.get_linestyle()) == ("o", "None")
    assert rgba(dots.get_color()) == rgba("k")


def test_friedman_plot_labels_each_model_under_its_rank_in_three_staggered_rows() -> None:
    """Model j (in rank order) at (rank, 0), its label 10, 20, 30, 10 … points below, centred, top-aligned, 7 pt."""
    (ax,) = friedman_plot(friedman_result()).axes
    labels = ax.texts[:4]
    assert [t.get_text() for t in labels] == ["be ta", "delta", "alpha", "gamma"]
    assert [tuple(t.xy) for t in labels] == [(1.25, 0), (2.25, 0), (2.5, 0), (4.0, 0)]
    assert [tuple(t.xyann) for t in labels] == [(0, -10), (0, -20), (0, -30), (0, -10)]
    assert {t.anncoords for t in labels} == {"offset points"}
    assert {(t.get_ha(), t.get_va(), t.get_fontsize()) for t in labels} == {("center", "top", 7.0)}


def test_friedman_plot_draws_the_critical_difference_bar_from_rank_one() -> None:
    (ax,) = friedman_plot(friedman_result()).axes
    bar = ax.lines[1]
    assert list(bar.get_xdata()) == [1, 1 + 1.2345678] and list(bar.get_ydata()) == [0.6, 0.6]
    assert rgba(bar.get_color()) == rgba("C3") and bar.get_linewidth() == 2.0
    assert bar.get_linestyle() == "-"
    label = ax.texts[4]
    assert label.get_text() == "CD = 1.235"
    assert label.get_position() == pytest.approx((1 + 1.2345678 / 2, 0.7), abs=1e-12)
    assert (label.get_ha(), label.get_fontsize()) == ("center", 8.0)
    assert len(ax.texts) == 5 and len(ax.lines) == 2


def test_friedman_plot_axes_show_every_rank_and_the_test_in_the_x_label() -> None:
    (ax,) = friedman_plot(friedman_result()).axes
    assert ax.get_xlim() == (0.5, 4.5)
    assert ax.get_ylim() == (-1.2, 1.0)
    assert list(ax.get_yticks()) == []
    assert ax.get_xlabel() == "average rank (1 = best); Friedman χ² = 7.65, p = 0.0123"


@pytest.mark.parametrize(("k", "height"), [(2, 1.56), (4, 1.92), (10, 3.0)])
def test_friedman_plot_height_grows_with_the_number_of_models(k: int, height: float) -> None:
    """6 inches wide, 1.2 + 0.18·k high."""
    ranks = list(np.arange(1.0, k + 1))
    fig = friedman_plot(friedman_result(n_models=k, avg_ranks=ranks, models=[f"m{i}" for i in range(k)]))
    assert tuple(fig.get_size_inches()) == pytest.approx((6.0, height), abs=1e-12)
    (ax,) = fig.axes
    assert ax.get_xlim() == (0.5, k + 0.5)


def test_friedman_plot_is_laid_out_tightly() -> None:
    (ax,) = friedman_plot(friedman_result()).axes
    assert ax.get_position().x0 != pytest.approx(0.125, abs=1e-3)
