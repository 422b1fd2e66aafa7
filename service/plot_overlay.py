"""Several runs of one estimator on one figure: an estimator whose plot is curves declares them
(``EstimatorSpec.overlay``: ``result -> Curves``) and ``overlay_figure`` draws every run's curves on shared axes,
one colour per run and one line style per curve. All text is drawn as plain text (``plain_label``)."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.plot_text import plain_label

LINE_STYLES = ("-", "--", ":", "-.")
"""The line style of a run's first, second, … curve (cycling)."""
MAX_LEGEND = 24
"""Legend entries shown; more curves are drawn without a legend entry."""


@dataclass(frozen=True)
class Curve:
    """One series: ``y`` against ``x`` (``None`` in ``y`` is a gap), named ``label``."""

    label: str
    x: Sequence[float]
    y: Sequence[float | None]


@dataclass(frozen=True)
class Curves:
    """What a run's plot draws as curves, with the axes they share with other runs of the same estimator."""

    x_label: str
    y_label: str
    curves: tuple[Curve, ...]
    x_log: bool = False
    y_log: bool = False


def curve_gid(run: int, curve: int) -> str:
    """The SVG id of run ``run``'s ``curve``-th line (both 0-based)."""
    return f"overlay-run{run}-curve{curve}"


def overlay_figure(title: str, runs: Sequence[tuple[str, Curves]]) -> Any:
    """One axes with every run's curves: run ``i`` in colour ``Ci``, its ``j``-th curve in ``LINE_STYLES[j]``,
    labelled ``"<run label>: <curve label>"``; the axis labels and scales of the first run."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    first = runs[0][1]
    entries = 0
    for i, (run_label, curves) in enumerate(runs):
        for j, curve in enumerate(curves.curves):
            y = [float("nan") if v is None else v for v in curve.y]
            label = plain_label(f"{run_label}: {curve.label}") if entries < MAX_LEGEND else "_nolegend_"
            ax.plot(
                list(curve.x),
                y,
                color=f"C{i % 10}",
                linestyle=LINE_STYLES[j % len(LINE_STYLES)],
                marker=".",
                label=label,
                gid=curve_gid(i, j),
            )
            entries += 1
    if first.x_log:
        ax.set_xscale("log")
    if first.y_log:
        ax.set_yscale("log")
    ax.set_xlabel(plain_label(first.x_label, 120))
    ax.set_ylabel(plain_label(first.y_label, 120))
    ax.set_title(plain_label(title, 120), fontsize=9)
    if entries:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
