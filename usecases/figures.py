"""Figures as SVG or PNG: an estimator run's plot, a leaderboard with its intervals, a reproduction report's plot.

Rendering uses matplotlib's Agg canvas (imported on first use). Runs and reports are immutable, so their
rendered bytes are kept in a per-process LRU keyed by id and format.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from service.registry import ESTIMATORS
from usecases import benchmarks, reproductions, runs
from usecases.api_keys import Principal
from usecases.errors import NotFound

if TYPE_CHECKING:
    from usecases.services import Services

Format = Literal["svg", "png"]
MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}
_CACHE_SIZE = 256
_CACHE: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_LOCK = threading.Lock()


def render(fig: Any, fmt: Format) -> bytes:
    """The figure's bytes in ``fmt`` (PNG at 110 dpi); the figure is drawn on an Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else None)
    return out.getvalue()


def _cached(key: tuple[str, str], draw: Callable[[], Any], fmt: Format) -> bytes:
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    data = render(draw(), fmt)
    with _LOCK:
        _CACHE[key] = data
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return data


def run_plot(services: Services, principal: Principal | None, run_id: str, fmt: Format) -> bytes:
    """The plot of a stored estimator run (same visibility as the run); NotFound when its estimator has none."""
    row = runs.get_run(services, principal, run_id)
    spec = ESTIMATORS.get(row.name) if row.kind == "estimator" else None
    if spec is None or spec.plot is None or spec.version != row.version:
        raise NotFound(f"{row.kind} {row.name!r} (version {row.version}) declares no plot")
    plot = spec.plot
    return _cached((f"run:{row.id}", fmt), lambda: plot(spec.result_model.model_validate_json(row.result)), fmt)


def leaderboard_figure(page: benchmarks.LeaderboardPage, title: str) -> Any:
    """The metric with its confidence interval per submission, best at the top."""
    from matplotlib.figure import Figure

    rows = [r for r in page.rows if page.metric in r["scores"]]
    fig = Figure(figsize=(7, 0.8 + 0.35 * max(len(rows), 1)))
    ax = fig.add_subplot()
    labels, values, lows, highs = [], [], [], []
    for r in reversed(rows):
        s = r["scores"][page.metric]
        labels.append(f"{r['rank']}. {r['model']}")
        values.append(s["value"])
        lows.append(s["value"] - s["ci_low"] if s["ci_low"] is not None else 0.0)
        highs.append(s["ci_high"] - s["value"] if s["ci_high"] is not None else 0.0)
    y = list(range(len(rows)))
    ax.errorbar(values, y, xerr=[lows, highs], fmt="o", capsize=3)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel(f"{page.metric} ({'higher' if page.higher_is_better else 'lower'} is better)")
    ax.set_title(f"{title}: {page.split} split, answer key v{page.answer_key_version}", fontsize=9)
    fig.tight_layout()
    return fig


def leaderboard_plot(
    services: Services, principal: Principal | None, benchmark_id: str, *, split: str, metric: str | None, fmt: Format
) -> bytes:
    """The first 100 ranked rows of the leaderboard as a figure (drawn fresh: leaderboards change)."""
    page = benchmarks.leaderboard(
        services, principal, benchmark_id, split=split, metric=metric, rank_by="best", limit=100, cursor=None
    )
    view = benchmarks.get_benchmark(services, benchmark_id)
    return render(leaderboard_figure(page, view.row.name), fmt)


def report_plot(services: Services, paper: str, report_id: str, fmt: Format) -> bytes:
    """The plot of a stored reproduction report, drawn from the runs it used."""
    entry, row = reproductions.report(services, paper, report_id)
    return _cached((f"report:{row.id}", fmt), lambda: reproductions.report_figure(services, entry, row), fmt)
