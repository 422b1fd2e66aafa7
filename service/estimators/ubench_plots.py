"""Figures of the U-Bench estimators: per-case IoU/Dice bars and the Friedman-Nemenyi critical-difference diagram."""

from typing import Any

import numpy as np

from service.plot_text import plain_label


def seg_metrics_plot(result: Any) -> Any:
    """Per-case IoU and Dice as grouped bars, with the means as dashed lines."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4.0, 0.25 * len(result.cases) + 2), 3.5))
    ax = fig.add_subplot()
    x = np.arange(len(result.cases))
    ax.bar(x - 0.2, [c.iou for c in result.cases], width=0.4, label="IoU")
    ax.bar(x + 0.2, [c.dice for c in result.cases], width=0.4, label="Dice")
    ax.axhline(result.mean.iou, color="C0", ls="--", lw=1)
    ax.axhline(result.mean.dice, color="C1", ls="--", lw=1)
    ax.set_xlabel("case")
    ax.set_ylabel("score")
    ax.set_ylim(0, 1.05)
    ax.set_xticks(x)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def friedman_plot(result: Any) -> Any:
    """Critical-difference diagram: average ranks on a line, the Nemenyi CD as a bar above it (Demšar, 2006)."""
    from matplotlib.figure import Figure

    k = result.n_models
    fig = Figure(figsize=(6, 1.2 + 0.18 * k))
    ax = fig.add_subplot()
    order = np.argsort(result.avg_ranks)
    ranks = np.asarray(result.avg_ranks)[order]
    ax.plot(ranks, np.zeros(k), "o", color="k")
    for i, j in enumerate(order):
        ax.annotate(
            plain_label(result.models[j]),
            (ranks[i], 0),
            xytext=(0, -10 - 10 * (i % 3)),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=7,
        )
    ax.plot([1, 1 + result.cd], [0.6, 0.6], color="C3", lw=2)
    ax.text(1 + result.cd / 2, 0.7, f"CD = {result.cd:.3f}", ha="center", fontsize=8)
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-1.2, 1.0)
    ax.set_yticks([])
    ax.set_xlabel(f"average rank (1 = best); Friedman χ² = {result.chi2:.3g}, p = {result.p:.3g}")
    fig.tight_layout()
    return fig
