"""The overlay figure (service/plot_overlay.py) on hand-made curves: each run's colour, each curve's line style,
gaps, labels, scales, the legend's cap and the figure's size, all known before the figure is drawn (written for the
mutation run's survivors, docs/testing.md)."""

import math

import pytest

from service.plot_overlay import MAX_LEGEND, Curve, Curves, curve_gid, overlay_figure


def one(label: str, x: list[float], y: list[float | None]) -> Curves:
    return Curves("x", "y", (Curve(label, x, y),))


def test_gids_name_run_and_curve() -> None:
    assert curve_gid(0, 0) == "overlay-run0-curve0"
    assert curve_gid(3, 12) == "overlay-run3-curve12"


def test_each_curve_of_a_run_cycles_through_four_line_styles_in_the_run_colour() -> None:
    styles = ["-", "--", ":", "-.", "-", "--"]  # solid, dashed, dotted, dash-dot, then again
    curves = Curves("n", "t", tuple(Curve(f"c{j}", [1.0, 2.0], [float(j), float(j) + 1]) for j in range(6)))
    fig = overlay_figure("T", [("a", curves), ("b", curves)])
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_gid() for line in lines] == [f"overlay-run{i}-curve{j}" for i in range(2) for j in range(6)]
    assert [line.get_linestyle() for line in lines] == styles * 2
    assert [line.get_color() for line in lines] == ["C0"] * 6 + ["C1"] * 6
    assert {line.get_marker() for line in lines} == {"."}
    assert [line.get_label() for line in lines] == [f"{r}: c{j}" for r in "ab" for j in range(6)]
    assert [list(line.get_ydata()) for line in lines[:3]] == [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]


def test_the_eleventh_run_takes_the_first_colour_again() -> None:
    runs = [(f"r{i}", one("c", [1.0], [1.0])) for i in range(12)]
    colors = [line.get_color() for line in overlay_figure("T", runs).axes[0].get_lines()]
    assert colors == [f"C{i}" for i in range(10)] + ["C0", "C1"]  # matplotlib's 10-colour cycle


def test_none_in_y_is_a_gap_and_x_is_drawn_as_given() -> None:
    fig = overlay_figure("T", [("r", one("c", [1.0, 2.0, 3.0, 4.0], [0.5, None, 2.5, None]))])
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [1.0, 2.0, 3.0, 4.0]
    y = list(line.get_ydata())
    assert y[0] == 0.5 and y[2] == 2.5 and math.isnan(y[1]) and math.isnan(y[3])


def test_axes_take_the_first_runs_labels_and_scales() -> None:
    first = Curves("size n", "seconds", (Curve("c", [1.0, 10.0], [1.0, 100.0]),), x_log=True, y_log=False)
    second = Curves("other x", "other y", (Curve("c", [1.0, 10.0], [1.0, 100.0]),), x_log=False, y_log=True)
    ax = overlay_figure("Title", [("a", first), ("b", second)]).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("size n", "seconds", "Title")
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "linear")
    ax = overlay_figure("Title", [("b", second), ("a", first)]).axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "log")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("other x", "other y")
    ax = overlay_figure("Title", [("a", one("c", [1.0, 2.0], [1.0, 2.0]))]).axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "linear")  # both off by default


def test_text_is_one_line_cut_at_120_for_axes_and_title_and_60_for_entries() -> None:
    long = "w" * 130
    curves = Curves(long, "two\nlines", (Curve("c\nd", [1.0], [1.0]),))
    ax = overlay_figure("t\n" + long, [("run\n1", curves)]).axes[0]
    assert ax.get_xlabel() == "w" * 119 + "…"
    assert ax.get_ylabel() == "two lines"
    assert ax.get_title() == ("t " + long)[:119] + "…"
    (line,) = ax.get_lines()
    assert line.get_label() == "run 1: c d"
    entry = overlay_figure("T", [("r" * 70, one("c", [1.0], [1.0]))]).axes[0].get_lines()[0].get_label()
    assert entry == "r" * 59 + "…"


def test_title_and_legend_font_sizes() -> None:
    ax = overlay_figure("T", [("a", one("c", [1.0], [1.0]))]).axes[0]
    assert ax.title.get_fontsize() == 9
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["a: c"]
    assert {t.get_fontsize() for t in legend.get_texts()} == {7}


def test_legend_lists_the_first_24_curves_and_the_rest_are_drawn_without_an_entry() -> None:
    assert MAX_LEGEND == 24
    curves = Curves("x", "y", tuple(Curve(f"c{j}", [1.0], [float(j)]) for j in range(5)))
    runs = [(f"r{i}", curves) for i in range(5)]  # 25 curves
    ax = overlay_figure("T", runs).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert len(labels) == 25
    assert labels[:24] == [f"r{i}: c{j}" for i in range(5) for j in range(5)][:24]
    assert labels[24] == "_nolegend_"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels[:24]
    runs = [(f"r{i}", one("c", [1.0], [1.0])) for i in range(24)]  # exactly 24: every one listed
    assert len(overlay_figure("T", runs).axes[0].get_legend().get_texts()) == 24


def test_no_curve_no_legend() -> None:
    ax = overlay_figure("T", [("a", Curves("x", "y", ()))]).axes[0]
    assert ax.get_lines() == [] and ax.get_legend() is None


def test_figure_size_and_tight_layout() -> None:
    fig = overlay_figure("T", [("a", one("c", [1.0], [1.0]))])
    assert tuple(fig.get_size_inches()) == pytest.approx((7.0, 4.5))
    # tight_layout moves the axes off matplotlib's default subplot margins (left 0.125, bottom 0.11)
    box = fig.axes[0].get_position()
    assert box.x0 != pytest.approx(0.125) and box.y0 != pytest.approx(0.11)
