"""Reproduction checks of the benchmark papers: their published aggregates recomputed with our scorers' formulas."""

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from service.reproductions.base import Outcome
from service.scoring import televal, vimu

Results = Sequence[Mapping[str, Any]]
TABLE_TOLERANCE = 0.01
"""Published tables are rounded to two decimals."""


def vimu_rows() -> list[dict[str, Any]]:
    """The 16 MLLM rows of ViMU's published results table (task scores OE, EG, RM, SV and both averages)."""
    text = resources.files("service.reproductions").joinpath("data/vimu_published_rows.json").read_text()
    return json.loads(text)["rows"]


def vimu_judge(results: Results) -> Outcome:
    """Every published model stays below 50 All-Avg, and SSU-Avg / All-Avg recompute from the task scores."""
    rows = vimu_rows()
    recomputed = [vimu.aggregate(r["oe"], r["eg"], r["rm"], r["sv"]) for r in rows]
    worst = max(
        max(abs(ssu - r["ssu_avg"]), abs(avg - r["all_avg"])) for (ssu, avg), r in zip(recomputed, rows, strict=True)
    )
    best = max(rows, key=lambda r: r["all_avg"])
    figures = {
        "models": len(rows),
        "best_model": best["model"],
        "best_all_avg": best["all_avg"],
        "best_ssu_avg": max(r["ssu_avg"] for r in rows),
        "max_recompute_error": worst,
    }
    ok = best["all_avg"] < 50 and worst <= TABLE_TOLERANCE
    reason = (
        f"the best of {len(rows)} models ({best['model']}) reaches All-Avg {best['all_avg']:.2f} < 50; both "
        f"averages recompute from the task scores within {worst:.3f}"
    )
    return Outcome("reproduced" if ok else "not_reproduced", figures, reason)


def vimu_plot(results: Results, outcome: Outcome) -> Any:
    """All-Avg and SSU-Avg per model, with the 50-point line."""
    from matplotlib.figure import Figure

    rows = sorted(vimu_rows(), key=lambda r: r["all_avg"])
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], [r["all_avg"] for r in rows], height=0.4, label="All-Avg")
    ax.barh([i - 0.2 for i in y], [r["ssu_avg"] for r in rows], height=0.4, label="SSU-Avg")
    ax.set_yticks(list(y), [r["model"] for r in rows], fontsize=7)
    ax.axvline(50, color="k", ls="--", lw=1)
    ax.set_xlabel("score (0-100)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


TELEVAL_BASIC_KNOWLEDGE = (
    [80.67, 68.33, 73.60, 58.54, 61.35, 50.77, 34.49, 55.45],
    [300, 300, 837, 837, 1938, 1938, 2668, 827],
)
"""GPT-4o-Audio on the eight Basic Knowledge datasets and their sizes (TELEVAL's per-dataset table)."""
TELEVAL_DIALECT_SIZES = [659, 564, 615, 542, 674]
TELEVAL_DIALECT = {
    "GPT-4o-Audio": [32.93, 10.82, 38.70, 2.58, 17.21],
    "Qwen2.5-Omni": [48.10, 34.75, 46.99, 24.72, 44.81],
}
TELEVAL_PUBLISHED = {"basic_knowledge_gpt4o": 52.93, "dialect_gpt4o": 21.15, "dialect_qwen": 40.54}


def televal_judge(results: Results) -> Outcome:
    """TELEVAL's size-weighted group means (52.93, 21.15, 40.54) recompute from its per-dataset scores."""
    figures = {
        "basic_knowledge_gpt4o": televal.weighted_mean(*TELEVAL_BASIC_KNOWLEDGE),
        "dialect_gpt4o": televal.weighted_mean(TELEVAL_DIALECT["GPT-4o-Audio"], TELEVAL_DIALECT_SIZES),
        "dialect_qwen": televal.weighted_mean(TELEVAL_DIALECT["Qwen2.5-Omni"], TELEVAL_DIALECT_SIZES),
    }
    ok = all(round(figures[k], 2) == v for k, v in TELEVAL_PUBLISHED.items())
    reason = "weighted group means " + ", ".join(
        f"{figures[k]:.3f} (published {v})" for k, v in TELEVAL_PUBLISHED.items()
    )
    return Outcome("reproduced" if ok else "not_reproduced", figures, reason)


def televal_plot(results: Results, outcome: Outcome) -> Any:
    """Recomputed against published group means."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.5))
    ax = fig.add_subplot()
    keys = list(TELEVAL_PUBLISHED)
    x = range(len(keys))
    ax.bar([i - 0.2 for i in x], [TELEVAL_PUBLISHED[k] for k in keys], width=0.4, label="published")
    ax.bar([i + 0.2 for i in x], [outcome.figures[k] for k in keys], width=0.4, label="recomputed")
    ax.set_xticks(list(x), ["Basic Knowledge\nGPT-4o-Audio", "Dialect\nGPT-4o-Audio", "Dialect\nQwen2.5-Omni"])
    ax.set_ylabel("weighted mean score")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
