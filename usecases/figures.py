"""Figures as SVG or PNG: an estimator run's plot, several runs' curves overlaid, a leaderboard with its intervals,
a reproduction report's plot.

A figure is described by what it draws (a ``Drawing``: its kind and JSON data) and drawn in a child process forked
from a forkserver that has matplotlib loaded: one drawing at a time per API process, all text plain (no mathtext,
no TeX), stopped past ``CPU_BUDGET_S`` of CPU time or ``WALL_BUDGET_S`` of wall time, refused above ``MAX_BYTES``.
The bytes are kept in a per-process LRU keyed by the SHA-256 of the drawing, so the same content is drawn once. A
figure that fails, or does not fit its budget, is answered with a placeholder image (``Plot.placeholder``) and
logged; it is never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import resource
import signal
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from service.plot_overlay import overlay_figure
from service.plot_text import plain_label
from service.registry import ESTIMATORS
from usecases import benchmarks, phases, reproductions, runs
from usecases.api_keys import Principal
from usecases.errors import NotFound, invalid

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext

    from usecases.services import Services

Format = Literal["svg", "png"]
MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}
CPU_BUDGET_S = 10
"""CPU seconds a drawing may use (``RLIMIT_CPU`` of its child process: SIGXCPU ends it); a 100-row leaderboard with
60-character names takes about 4.5 s on one core."""
WALL_BUDGET_S = 60.0
"""Wall time a drawing may take on a loaded machine; its child is killed after it."""
QUEUE_BUDGET_S = 120.0
"""Longest a request waits for the drawings before it (one at a time) before it is answered with the placeholder."""
MAX_WAITING = 8
"""Requests waiting for a drawing slot; one more is answered with the placeholder at once, so waiting plot requests
never hold more than 8 of the server's worker threads."""
MAX_BYTES = 8 * 1024 * 1024
"""Largest figure answered; a larger one is the placeholder."""
LEADERBOARD_TOP = 30
"""Ranks drawn in a leaderboard plot by default (``top``), besides the caller's own best row."""
LEADERBOARD_MAX_TOP = 200
"""Most ranks a leaderboard plot draws."""
INTERVAL = ("value", "ci_low", "ci_high")
"""A leaderboard row's score fields drawn: the point and its interval."""
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}
"""matplotlib settings under which every string is drawn as it is: ``$x_{i}$`` stays dollars and braces."""
_CACHE_SIZE = 256
_CACHE: OrderedDict[str, bytes] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_DRAW_LOCK = threading.Lock()
_waiting = 0
_PLACEHOLDER_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40" viewBox="0 0 320 40">'
    b'<rect width="320" height="40" fill="#eeeeee"/>'
    b'<text x="10" y="25" font-family="sans-serif" font-size="14" fill="#555555">figure unavailable</text></svg>'
)
_PLACEHOLDER_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010800000000"
    "3a7e9b550000000a49444154789c63e8000000820081b5a8b1d10000000049454e44ae426082"
)
"""A 1 x 1 grey PNG."""
PLACEHOLDERS: dict[str, bytes] = {"svg": _PLACEHOLDER_SVG, "png": _PLACEHOLDER_PNG}
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Drawing:
    """What a figure draws: ``kind`` (``run``, ``overlay``, ``leaderboard``, ``report``) and the JSON data it is drawn
    from."""

    kind: str
    data: dict[str, Any]

    def content_key(self, fmt: Format) -> str:
        """SHA-256 of the drawing and format (canonical JSON): equal content, equal key."""
        text = json.dumps([self.kind, self.data, fmt], sort_keys=True, separators=(",", ":"), allow_nan=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Plot:
    """A figure's bytes; ``placeholder`` when the figure could not be drawn within its budget; ``shared`` when
    anyone may see it (a plot of a keyed run is not)."""

    data: bytes
    media_type: str
    placeholder: bool
    shared: bool


def render(fig: Any, fmt: Format) -> bytes:
    """The figure's bytes in ``fmt`` (PNG at 110 dpi); the figure is drawn on an Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else None)
    return out.getvalue()


def leaderboard_figure(data: dict[str, Any]) -> Any:
    """The metric with its confidence interval per leaderboard row, best at the top (names cut to 60 characters);
    a row marked ``own`` (the caller's) in another colour."""
    from matplotlib.figure import Figure

    rows = data["rows"]
    fig = Figure(figsize=(7, 0.8 + 0.35 * max(len(rows), 1)))
    ax = fig.add_subplot()
    labels = []
    for y, r in enumerate(reversed(rows)):
        rank = "baseline" if r["rank"] is None else f"{r['rank']}."
        labels.append(f"{rank} {plain_label(r['model'])}" + (" (yours)" if r.get("own") else ""))
        low = r["value"] - r["ci_low"] if r["ci_low"] is not None else 0.0
        high = r["ci_high"] - r["value"] if r["ci_high"] is not None else 0.0
        color = "tab:orange" if r.get("own") else "tab:blue"
        ax.errorbar([r["value"]], [y], xerr=[[low], [high]], fmt="o", capsize=3, color=color)
    ax.set_yticks(list(range(len(rows))), labels, fontsize=8)
    ax.set_xlabel(f"{data['metric']} ({'higher' if data['higher_is_better'] else 'lower'} is better)")
    ax.set_title(plain_label(data["title"], 120), fontsize=9)
    fig.tight_layout()
    return fig


def draw(drawing: Drawing) -> Any:
    """The matplotlib figure of ``drawing`` (in the child process)."""
    if drawing.kind == "run":
        spec = ESTIMATORS[drawing.data["estimator"]]
        assert spec.plot is not None
        return spec.plot(spec.result_model.model_validate_json(drawing.data["result"]))
    if drawing.kind == "overlay":
        spec = ESTIMATORS[drawing.data["estimator"]]
        assert spec.overlay is not None
        runs_curves = [
            (label, spec.overlay(spec.result_model.model_validate_json(result)))
            for label, result in zip(drawing.data["labels"], drawing.data["results"], strict=True)
        ]
        return overlay_figure(drawing.data["title"], runs_curves)
    if drawing.kind == "report":
        return reproductions.draw_report(drawing.data["paper"], drawing.data["results"], drawing.data["outcome"])
    return leaderboard_figure(drawing.data)


def _draw_in_child(conn: Connection, drawing: Drawing, fmt: Format, cpu_budget_s: int) -> None:
    """Child process: draw with plain text within ``cpu_budget_s``, send ``b"1" + bytes``, or ``b"0" + the error``."""
    import matplotlib

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_budget_s, cpu_budget_s + 1))
    try:
        with matplotlib.rc_context(PLAIN_TEXT):
            message = b"1" + render(draw(drawing), fmt)
    except Exception as exc:  # the parent logs it and answers the placeholder
        message = b"0" + f"{type(exc).__name__}: {exc}"[:500].encode()
    with contextlib.suppress(OSError), conn:  # the parent stopped listening: over its size or time budget
        conn.send_bytes(message)


@cache
def _context() -> ForkServerContext:
    """The forkserver context, its server preloading matplotlib and the estimators (started on the first figure)."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["matplotlib.figure", "matplotlib.backends.backend_agg", "service.estimators", __name__])
    return ctx


def _draw_bounded(drawing: Drawing, fmt: Format) -> bytes:
    """``drawing`` in a child process within the time and size budget; ``RuntimeError`` saying why not."""
    ctx = _context()
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_draw_in_child, args=(sender, drawing, fmt, CPU_BUDGET_S), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(WALL_BUDGET_S):
            raise RuntimeError(f"drawing took longer than {WALL_BUDGET_S:g} s")
        try:
            message = receiver.recv_bytes(MAX_BYTES + 1)
        except EOFError as exc:
            child.join(1.0)
            if child.exitcode == -signal.SIGXCPU:
                raise RuntimeError(f"drawing used more than {CPU_BUDGET_S} s of CPU time") from exc
            raise RuntimeError(f"the drawing process ended without a figure (exit code {child.exitcode})") from exc
        except OSError as exc:
            raise RuntimeError(f"the figure is larger than {MAX_BYTES} bytes") from exc
        if message[:1] != b"1":
            raise RuntimeError(message[1:].decode(errors="replace"))
        return message[1:]
    finally:
        receiver.close()
        child.join(1.0)
        if child.is_alive():
            child.kill()
            child.join()


def _take_slot() -> None:
    """Hold the drawing lock (waiting at most ``QUEUE_BUDGET_S``, behind at most ``MAX_WAITING - 1`` others)."""
    global _waiting
    with _CACHE_LOCK:
        if _waiting >= MAX_WAITING:
            raise RuntimeError(f"{MAX_WAITING} requests already wait for a drawing slot")
        _waiting += 1
    try:
        if not _DRAW_LOCK.acquire(timeout=QUEUE_BUDGET_S):
            raise RuntimeError(f"no drawing slot within {QUEUE_BUDGET_S:g} s")
    finally:
        with _CACHE_LOCK:
            _waiting -= 1


def figure(drawing: Drawing, fmt: Format, *, shared: bool) -> Plot:
    """The figure of ``drawing`` from the LRU, or drawn (one at a time); the placeholder when it cannot be."""
    key = drawing.content_key(fmt)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return Plot(hit, MEDIA_TYPES[fmt], placeholder=False, shared=shared)
    started = time.monotonic()
    try:
        _take_slot()
        try:
            with _CACHE_LOCK:
                data = _CACHE.get(key)
            if data is None:
                data = _draw_bounded(drawing, fmt)
        finally:
            _DRAW_LOCK.release()
    except RuntimeError as exc:
        logger.warning(
            "figure answered with a placeholder: %s",
            exc,
            extra={"figure": drawing.kind, "reason": str(exc), "ms": round(1000 * (time.monotonic() - started))},
        )
        return Plot(PLACEHOLDERS[fmt], MEDIA_TYPES[fmt], placeholder=True, shared=shared)
    with _CACHE_LOCK:
        _CACHE[key] = data
        _CACHE.move_to_end(key)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return Plot(data, MEDIA_TYPES[fmt], placeholder=False, shared=shared)


def run_plot(services: Services, principal: Principal | None, run_id: str, fmt: Format) -> Plot:
    """The plot of a stored estimator run (same visibility as the run); NotFound when its estimator has none.
    Shared when the run was made without a key and keys are not required."""
    row = runs.get_run(services, principal, run_id)
    spec = ESTIMATORS.get(row.name) if row.kind == "estimator" else None
    if spec is None or spec.plot is None or spec.version != row.version:
        raise NotFound(f"{row.kind} {row.name!r} (version {row.version}) declares no plot")
    drawing = Drawing("run", {"estimator": row.name, "result": row.result})
    return figure(drawing, fmt, shared=row.api_key_id is None and not services.settings.require_keys)


def overlay_drawing(comparison: runs.RunComparison) -> Drawing:
    """What a compare plot draws: the runs' results (in the order compared), each labelled by its place and the
    start of its id; a 422 naming ``ids`` when the estimator declares no overlay or another version made a run."""
    spec = ESTIMATORS.get(comparison.name) if comparison.kind == "estimator" else None
    loc = ("query", "ids")
    if spec is None or spec.overlay is None:
        raise invalid(
            f"{comparison.kind} {comparison.name!r} cannot overlay runs (its plot is not curves): compare them "
            "without the plot",
            loc,
            "value_error",
        )
    older = [r.id for r in comparison.runs if r.version != spec.version]
    if older:
        raise invalid(
            f"run(s) {', '.join(older)} were made by another version of {spec.name!r} than version {spec.version}, "
            "whose curves are drawn",
            loc,
            "value_error",
        )
    labels = [f"run {i + 1} ({r.id[:8]})" for i, r in enumerate(comparison.runs)]
    return Drawing(
        "overlay",
        {
            "estimator": spec.name,
            "title": f"{spec.name}: {len(labels)} runs",
            "labels": labels,
            "results": [r.result for r in comparison.runs],
        },
    )


def compare_plot(services: Services, principal: Principal | None, ids: list[str], fmt: Format) -> Plot:
    """The curves of 2 to 8 runs of one estimator on one figure (the runs' visibility and the checks of
    ``runs.compare_runs``); shared when every run was made without a key and keys are not required."""
    comparison = runs.compare_runs(services, principal, ids)
    shared = all(r.api_key_id is None for r in comparison.runs) and not services.settings.require_keys
    return figure(overlay_drawing(comparison), fmt, shared=shared)


def leaderboard_drawing(page: benchmarks.LeaderboardPage, name: str, own: dict[str, Any] | None = None) -> Drawing:
    """What a leaderboard plot draws: rank, model, value and interval of each row that has the metric, then the
    caller's ``own`` row when it is not among them; the caller's rows are marked ``own``."""
    shown = {r["submission_id"] for r in page.rows}
    ranked = page.rows + ([own] if own is not None and own["submission_id"] not in shown else [])
    own_id = own["submission_id"] if own is not None else None
    rows = [
        {
            "rank": r["rank"],
            "model": r["model"],
            **{k: r["scores"][page.metric][k] for k in ("value", "ci_low", "ci_high")},
            "own": r["submission_id"] == own_id,
        }
        for r in ranked
        if page.metric in r["scores"]
    ]
    title = f"{name}: {page.split} split, answer key v{page.answer_key_version}"
    return Drawing(
        "leaderboard",
        {"rows": rows, "metric": page.metric, "higher_is_better": page.higher_is_better, "title": title},
    )


def leaderboard_plot(
    services: Services,
    principal: Principal | None,
    benchmark_id: str,
    *,
    split: str,
    metric: str | None,
    fmt: Format,
    top: int = LEADERBOARD_TOP,
) -> Plot:
    """The first ``top`` ranked rows of the leaderboard (1 to ``LEADERBOARD_MAX_TOP``), and with a key the caller's
    own best-ranked row wherever it ranks, as a figure (cached by content: leaderboards change). Reads a page and
    one indexed rank lookup, whatever the number of submissions."""
    if not 1 <= top <= LEADERBOARD_MAX_TOP:
        raise invalid(
            f"top must be 1 to {LEADERBOARD_MAX_TOP}", ("query", "top"), "value_error", f"1-{LEADERBOARD_MAX_TOP}"
        )
    phases.freeze_ended(services, benchmark_id)
    page = benchmarks.leaderboard(
        services, principal, benchmark_id, split=split, metric=metric, rank_by="best", limit=top, cursor=None
    )
    own = None
    if principal is not None:
        own = benchmarks.own_row(services, principal, benchmark_id, split=split, metric=page.metric, rank_by="best")
    view = benchmarks.get_benchmark(services, benchmark_id)
    return figure(leaderboard_drawing(page, view.row.name, own), fmt, shared=False)


def report_plot(services: Services, paper: str, report_id: str, fmt: Format) -> Plot:
    """The plot of a stored reproduction report, drawn from the runs it used."""
    entry, row = reproductions.report(services, paper, report_id)
    results, outcome = reproductions.report_plot_inputs(services, entry, row)
    drawing = Drawing("report", {"paper": entry.paper, "results": results, "outcome": outcome})
    return figure(drawing, fmt, shared=True)
