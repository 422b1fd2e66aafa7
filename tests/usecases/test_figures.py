"""Figures (usecases/figures.py) called directly: a drawing's content key, the per-process LRU of drawn bytes and the
placeholder answered when a drawing fails (logged, never cached), the drawing slot and its refusals, what each use
case draws (a run's plot, several runs overlaid, a leaderboard with the caller's row, its refusals with their
``loc``) and the child-side drawing itself (plain text, CPU limit, errors sent back). The drawing process is forked
from the test process (``_context`` replaced), not the forkserver. Written for the mutation run of
``usecases.figures``."""

import dataclasses
import hashlib
import json
import logging
import multiprocessing
import struct
import threading
import time
import types
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from db.repositories.runs import RunRow
from service.plot_overlay import curve_gid
from service.registry import ESTIMATORS, no_progress
from tests.factories import admin, film_predictions, principal, stored_benchmark
from usecases import benchmarks, figures, reproductions, runs, submissions
from usecases.api_keys import Principal
from usecases.errors import InvalidFields, NotFound
from usecases.figures import Drawing
from usecases.runs import Computed, sha256_hex, store_run
from usecases.services import Services
from usecases.submissions import NewSubmission

MOEAD = "moead.omm_scaling"


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    figures._CACHE.clear()
    yield
    figures._CACHE.clear()


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Drawing, str]]:
    """``_draw_bounded`` replaced: records each drawing and answers ``b"<kind>:<fmt>:<count>"``."""
    seen: list[tuple[Drawing, str]] = []

    def fake(drawing: Drawing, fmt: str) -> bytes:
        seen.append((drawing, fmt))
        return f"{drawing.kind}:{fmt}:{len(seen)}".encode()

    monkeypatch.setattr(figures, "_draw_bounded", fake)
    return seen


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawings in a child forked from this process (the functions under test, as this process has them)."""
    monkeypatch.setattr(figures, "_context", lambda: multiprocessing.get_context("fork"))


def moead_result(ns: list[int], reps: int) -> str:
    spec = ESTIMATORS[MOEAD]
    return spec.fn(spec.params_model.model_validate({"ns": ns, "reps": reps}), no_progress).model_dump_json()


def stored(
    services: Services,
    name: str = MOEAD,
    result: str | None = None,
    owner: Principal | None = None,
    version: str | None = None,
    kind: str = "estimator",
) -> RunRow:
    params = json.dumps({"tag": sha256_hex(str(result) + name + str(version))[:12], "n": len(str(result))})
    computed = Computed(result or moead_result([4, 6], 2), 1.0, [])
    key = (kind, name, version or (ESTIMATORS[name].version if name in ESTIMATORS else "1"), sha256_hex(params))
    row, _ = store_run(services.engines, key, params, computed, owner.key_id if owner else None)
    return row


def board(*models: str, title: str = "t") -> dict[str, Any]:
    return {
        "rows": [
            {"rank": i + 1, "model": m, "value": 0.5, "ci_low": 0.25, "ci_high": 0.75} for i, m in enumerate(models)
        ],
        "metric": "accuracy",
        "higher_is_better": True,
        "title": title,
    }


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# --- content key, cache, placeholder --------------------------------------------------------------------------


def test_the_content_key_is_the_sha256_of_the_canonical_drawing() -> None:
    text = '["run",{"a":1,"b":[1.5,null]},"svg"]'
    assert Drawing("run", {"b": [1.5, None], "a": 1}).content_key("svg") == hashlib.sha256(text.encode()).hexdigest()
    nan = '["leaderboard",{"x":NaN},"png"]'
    assert Drawing("leaderboard", {"x": float("nan")}).content_key("png") == hashlib.sha256(nan.encode()).hexdigest()
    keys = {Drawing("run", {"a": 1}).content_key("svg"), Drawing("run", {"a": 1}).content_key("png")}
    keys |= {Drawing("overlay", {"a": 1}).content_key("svg"), Drawing("run", {"a": 2}).content_key("svg")}
    assert len(keys) == 4


def test_a_figure_is_drawn_once_per_content_and_format(drawn: list[tuple[Drawing, str]]) -> None:
    d = Drawing("run", {"a": 1})
    first = figures.figure(d, "svg", shared=True)
    assert first == figures.Plot(b"run:svg:1", "image/svg+xml", placeholder=False, shared=True)
    assert figures.figure(d, "svg", shared=False) == figures.Plot(b"run:svg:1", "image/svg+xml", False, False)
    assert figures.figure(Drawing("run", {"a": 1}), "png", shared=True) == figures.Plot(
        b"run:png:2", "image/png", False, True
    )
    assert [fmt for _, fmt in drawn] == ["svg", "png"]
    assert {d.content_key("svg"): b"run:svg:1", d.content_key("png"): b"run:png:2"} == figures._CACHE
    assert not figures._DRAW_LOCK.locked() and figures._waiting == 0


def test_the_cache_keeps_the_most_recently_used_figures(
    drawn: list[tuple[Drawing, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(figures, "_CACHE_SIZE", 2)
    a, b, c = (Drawing("run", {"n": i}) for i in range(3))
    figures.figure(a, "svg", shared=True)
    figures.figure(b, "svg", shared=True)
    figures.figure(a, "svg", shared=True)  # a hit: a is now the most recent
    figures.figure(c, "svg", shared=True)  # b, the least recent, goes
    assert list(figures._CACHE) == [a.content_key("svg"), c.content_key("svg")]
    assert figures.figure(a, "svg", shared=True).data == b"run:svg:1" and len(drawn) == 3
    assert figures.figure(b, "svg", shared=True).data == b"run:svg:4"  # drawn again
    assert list(figures._CACHE) == [a.content_key("svg"), b.content_key("svg")]


def test_a_figure_drawn_while_waiting_for_the_slot_is_taken_from_the_cache(
    drawn: list[tuple[Drawing, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = Drawing("run", {"a": 1})
    take = figures._take_slot

    def slot_after_another_drew_it() -> None:
        take()
        figures._CACHE[d.content_key("png")] = b"drawn by the request before"

    monkeypatch.setattr(figures, "_take_slot", slot_after_another_drew_it)
    plot = figures.figure(d, "png", shared=False)
    assert plot == figures.Plot(b"drawn by the request before", "image/png", False, False) and drawn == []
    assert not figures._DRAW_LOCK.locked()


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_a_failed_drawing_is_a_logged_placeholder_and_is_not_cached(
    fmt: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def failing(drawing: Drawing, fmt: str) -> bytes:
        raise RuntimeError("it broke")

    monkeypatch.setattr(figures, "_draw_bounded", failing)
    with caplog.at_level(logging.WARNING, logger="usecases.figures"):
        started = time.monotonic()
        plot = figures.figure(Drawing("overlay", {"a": 1}), fmt, shared=True)  # type: ignore[arg-type]
        elapsed_ms = (time.monotonic() - started) * 1000
    assert plot == figures.Plot(figures.PLACEHOLDERS[fmt], figures.MEDIA_TYPES[fmt], placeholder=True, shared=True)
    (record,) = caplog.records
    assert record.getMessage() == "figure answered with a placeholder: it broke"
    assert (record.figure, record.reason) == ("overlay", "it broke")  # type: ignore[attr-defined]
    assert isinstance(record.ms, int) and 0 <= record.ms <= elapsed_ms + 1  # type: ignore[attr-defined]  # within the call
    assert figures._CACHE == {} and not figures._DRAW_LOCK.locked() and figures._waiting == 0


def test_the_placeholders_are_an_svg_and_a_one_pixel_png() -> None:
    assert figures.PLACEHOLDERS["svg"].startswith(b"<svg") and b"figure unavailable" in figures.PLACEHOLDERS["svg"]
    assert png_size(figures.PLACEHOLDERS["png"]) == (1, 1)
    assert figures.MEDIA_TYPES == {"svg": "image/svg+xml", "png": "image/png"}


# --- the drawing slot -----------------------------------------------------------------------------------------


def test_the_slot_is_the_drawing_lock_and_the_waiting_count_is_given_back() -> None:
    figures._take_slot()
    try:
        assert figures._DRAW_LOCK.locked() and figures._waiting == 0
    finally:
        figures._DRAW_LOCK.release()


def test_a_request_is_refused_when_enough_others_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "MAX_WAITING", 2)
    monkeypatch.setattr(figures, "_waiting", 2)
    with pytest.raises(RuntimeError, match=r"^2 requests already wait for a drawing slot$"):
        figures._take_slot()
    assert figures._waiting == 2 and not figures._DRAW_LOCK.locked()
    monkeypatch.setattr(figures, "_waiting", 1)
    figures._take_slot()  # one fewer waits: this one waits too, and gets the free slot
    assert figures._waiting == 1 and figures._DRAW_LOCK.locked()
    figures._DRAW_LOCK.release()


def test_a_request_waits_for_the_slot_at_most_the_queue_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "QUEUE_BUDGET_S", 0.05)
    seen: list[int] = []
    figures._DRAW_LOCK.acquire()
    try:
        waiter = threading.Thread(target=lambda: seen.append(figures._waiting))
        with pytest.raises(RuntimeError, match=r"^no drawing slot within 0.05 s$"):
            figures._take_slot()
        waiter.start()
        waiter.join()
    finally:
        figures._DRAW_LOCK.release()
    assert figures._waiting == 0 and seen == [0]


def test_a_waiting_request_is_counted_while_it_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "MAX_WAITING", 1)
    figures._DRAW_LOCK.acquire()
    waiting = threading.Thread(target=lambda: (figures._take_slot(), figures._DRAW_LOCK.release()))
    try:
        waiting.start()
        for _ in range(500):
            if figures._waiting == 1:
                break
            threading.Event().wait(0.005)
        assert figures._waiting == 1
        with pytest.raises(RuntimeError, match="1 requests already wait"):
            figures._take_slot()
    finally:
        figures._DRAW_LOCK.release()
        waiting.join()
    assert figures._waiting == 0


# --- drawing --------------------------------------------------------------------------------------------------


def test_a_leaderboard_figure_draws_each_row_with_its_interval_best_at_the_top() -> None:
    data = {
        "rows": [
            {"rank": 1, "model": "alpha", "value": 0.75, "ci_low": 0.5, "ci_high": 0.875},
            {"rank": None, "model": "base", "value": 0.5, "ci_low": None, "ci_high": None},
            {"rank": 2, "model": "mine\nnew", "value": 0.25, "ci_low": 0.125, "ci_high": 0.5, "own": True},
        ],
        "metric": "accuracy",
        "higher_is_better": False,
        "title": "x" * 130,
    }
    fig = figures.leaderboard_figure(data)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["2. mine new (yours)", "baseline base", "1. alpha"]
    assert list(ax.get_yticks()) == [0, 1, 2]
    assert ax.get_xlabel() == "accuracy (lower is better)" and ax.get_title() == "x" * 119 + "…"
    bars = []
    for container in ax.containers:
        line = container.lines[0]
        (segment,) = container.lines[2][0].get_segments()
        bars.append((line.get_xdata()[0], line.get_ydata()[0], [p[0] for p in segment], line.get_color()))
    for container in ax.containers:  # a round marker without a line, caps of 3 points each side
        assert (container.lines[0].get_marker(), container.lines[0].get_linestyle()) == ("o", "None")
        assert [cap.get_markersize() for cap in container.lines[1]] == [6.0, 6.0]
    assert {t.get_fontsize() for t in ax.get_yticklabels()} == {8.0} and ax.title.get_fontsize() == 9.0
    assert bars == [
        (0.25, 0, [0.125, 0.5], "tab:orange"),
        (0.5, 1, [0.5, 0.5], "tab:blue"),
        (0.75, 2, [0.5, 0.875], "tab:blue"),
    ]
    assert tuple(fig.get_size_inches()) == pytest.approx((7, 0.8 + 0.35 * 3))
    higher = figures.leaderboard_figure({**data, "rows": [], "higher_is_better": True})
    assert higher.axes[0].get_xlabel() == "accuracy (higher is better)"
    assert tuple(higher.get_size_inches()) == pytest.approx((7, 0.8 + 0.35))


def test_render_writes_svg_without_a_date_and_png_at_110_dpi() -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1))
    fig.add_subplot().plot([0, 1], [1, 0])
    svg = figures.render(fig, "svg")
    assert svg.startswith(b"<?xml") and b"<svg" in svg and b"<dc:date>" not in svg
    assert png_size(figures.render(fig, "png")) == (220, 110)


def line_data(fig: Any) -> list[tuple[list[float], list[float], str]]:
    return [
        (list(line.get_xdata()), list(line.get_ydata()), str(line.get_label()))
        for ax in fig.axes
        for line in ax.get_lines()
    ]


def test_draw_makes_each_kinds_figure() -> None:
    spec = ESTIMATORS[MOEAD]
    a, b = moead_result([4, 6], 2), moead_result([4, 8], 2)
    run_fig = figures.draw(Drawing("run", {"estimator": MOEAD, "result": a}))
    assert line_data(run_fig) == line_data(spec.plot(spec.result_model.model_validate_json(a)))
    data = {"estimator": MOEAD, "title": "two", "labels": ["one", "two"], "results": [a, b]}
    overlay = figures.draw(Drawing("overlay", data))
    lines = {line.get_gid(): line for line in overlay.axes[0].get_lines()}
    assert sorted(lines) == [curve_gid(0, 0), curve_gid(1, 0)] and overlay.axes[0].get_title() == "two"
    for i, result in enumerate((a, b)):
        points = json.loads(result)["points"]
        assert list(lines[curve_gid(i, 0)].get_xdata()) == [p["n"] for p in points]
        assert lines[curve_gid(i, 0)].get_label().startswith(["one", "two"][i] + ": ")
    leaderboard = figures.draw(Drawing("leaderboard", board("m1", "m2")))
    assert [t.get_text() for t in leaderboard.axes[0].get_yticklabels()] == ["2. m2", "1. m1"]
    with pytest.raises(ValueError):  # labels and results are zipped strictly
        figures.draw(Drawing("overlay", {**data, "labels": ["one"]}))


def test_the_child_draws_with_plain_text_under_a_cpu_limit_and_sends_the_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits: list[tuple[int, tuple[int, int]]] = []
    monkeypatch.setattr(figures.resource, "setrlimit", lambda which, values: limits.append((which, values)))
    receiver, sender = multiprocessing.Pipe(duplex=False)
    figures._draw_in_child(sender, Drawing("leaderboard", board(r"$\frac{1}{$", title="$x_{i")), "png", 7)
    message = receiver.recv_bytes()
    assert message[:1] == b"1" and message[1:9] == b"\x89PNG\r\n\x1a\n"  # mathtext would raise on these labels
    assert limits == [(figures.resource.RLIMIT_CPU, (7, 8))]
    with pytest.raises(EOFError):  # the child's end is closed after sending
        receiver.recv_bytes()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    figures._draw_in_child(sender, Drawing("leaderboard", board("m")), "svg", 7)
    assert receiver.recv_bytes()[:6] == b"1<?xml"


def test_the_child_sends_back_its_error_cut_at_500_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures.resource, "setrlimit", lambda which, values: None)
    receiver, sender = multiprocessing.Pipe(duplex=False)
    figures._draw_in_child(sender, Drawing("run", {"estimator": "no.such"}), "svg", 5)
    assert receiver.recv_bytes() == b"0KeyError: 'no.such'"
    receiver, sender = multiprocessing.Pipe(duplex=False)
    figures._draw_in_child(sender, Drawing("run", {"estimator": "y" * 1000}), "svg", 5)
    assert receiver.recv_bytes() == b"0" + (f"KeyError: '{'y' * 1000}'"[:500]).encode()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    receiver.close()  # the parent stopped listening: the child ends quietly
    figures._draw_in_child(sender, Drawing("leaderboard", board("m")), "svg", 5)


def test_a_drawing_in_a_child_process_answers_its_bytes_or_why_not(
    forked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    svg = figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")
    assert svg.startswith(b"<?xml") and b"</svg>" in svg[-20:]
    png = figures._draw_bounded(Drawing("leaderboard", board("m1")), "png")
    assert png_size(png) == (770, round(110 * 1.15))
    with pytest.raises(RuntimeError, match=r"^KeyError: 'no\.such'$"):
        figures._draw_bounded(Drawing("run", {"estimator": "no.such"}), "svg")
    monkeypatch.setattr(figures, "MAX_BYTES", 100)
    with pytest.raises(RuntimeError, match=r"^the figure is larger than 100 bytes$"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")
    monkeypatch.setattr(figures, "MAX_BYTES", len(svg) - 1)  # the size limit is on the figure's own bytes
    with pytest.raises(RuntimeError, match="larger than"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")
    monkeypatch.setattr(figures, "MAX_BYTES", len(svg))
    assert figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg").startswith(b"<?xml")


def test_a_drawing_over_the_wall_budget_or_without_an_answer_is_refused(
    forked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(figures, "WALL_BUDGET_S", 0.0)
    with pytest.raises(RuntimeError, match=r"^drawing took longer than 0 s$"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")
    monkeypatch.setattr(figures, "WALL_BUDGET_S", 30.0)

    def silent(conn: Any, drawing: Drawing, fmt: str, cpu_budget_s: int) -> None:
        conn.close()

    monkeypatch.setattr(figures, "_draw_in_child", silent)
    with pytest.raises(RuntimeError, match=r"^the drawing process ended without a figure \(exit code 0\)$"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")

    def over_cpu(conn: Any, drawing: Drawing, fmt: str, cpu_budget_s: int) -> None:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGXCPU)

    monkeypatch.setattr(figures, "_draw_in_child", over_cpu)
    monkeypatch.setattr(figures, "CPU_BUDGET_S", 3)
    with pytest.raises(RuntimeError, match=r"^drawing used more than 3 s of CPU time$"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")


# --- what the use cases draw ----------------------------------------------------------------------------------


def test_a_runs_plot_draws_its_stored_result_and_is_shared_when_anonymous(
    services: Services, drawn: list[tuple[Drawing, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    row = stored(services)
    plot = figures.run_plot(services, None, row.id, "png")
    assert plot == figures.Plot(b"run:png:1", "image/png", placeholder=False, shared=True)
    assert drawn[0][0] == Drawing("run", {"estimator": MOEAD, "result": row.result})
    alice = principal(services, "estimators:run")
    keyed = stored(services, result=moead_result([4, 5], 2), owner=alice)
    assert figures.run_plot(services, alice, keyed.id, "svg").shared is False
    with pytest.raises(NotFound):
        figures.run_plot(services, None, keyed.id, "svg")
    assert figures.run_plot(services, admin(services), row.id, "svg").shared is True  # the run's, not the caller's
    monkeypatch.setattr(services, "settings", services.settings.model_copy(update={"require_keys": True}))
    assert figures.run_plot(services, admin(services), row.id, "svg").shared is False


def test_a_run_without_a_plot_of_this_version_has_none(services: Services, drawn: list[tuple[Drawing, str]]) -> None:
    nml = ESTIMATORS["compression.nml_regret"]
    no_plot = stored(services, "compression.nml_regret", result='{"x":1}')
    older = stored(services, result=moead_result([4, 7], 2), version="0")
    scorer = stored(services, "film_mcq", result='{"x":2}', kind="scorer")
    unknown = stored(services, "no.such", result='{"x":3}')
    assert nml.plot is None
    for row in (no_plot, older, scorer, unknown):
        with pytest.raises(NotFound):
            figures.run_plot(services, None, row.id, "svg")
    assert drawn == []


def comparison(services: Services, *rows: RunRow, kind: str = "estimator", name: str = MOEAD) -> runs.RunComparison:
    return runs.RunComparison(kind, name, list(rows), False, {}, {})


def test_an_overlay_draws_the_runs_in_order_labelled_by_place_and_id(services: Services) -> None:
    a, b, c = (stored(services, result=moead_result([4, n], 2)) for n in (5, 6, 7))
    drawing = figures.overlay_drawing(comparison(services, b, a, c))
    assert drawing == Drawing(
        "overlay",
        {
            "estimator": MOEAD,
            "title": f"{MOEAD}: 3 runs",
            "labels": [f"run 1 ({b.id[:8]})", f"run 2 ({a.id[:8]})", f"run 3 ({c.id[:8]})"],
            "results": [b.result, a.result, c.result],
        },
    )


def test_an_overlay_is_refused_naming_ids_without_curves_or_across_versions(services: Services) -> None:
    a = stored(services, result=moead_result([4, 5], 2))
    older = [dataclasses.replace(a, id=f"old-{i}", version="0") for i in range(2)]
    cases = [
        comparison(services, a, a, kind="scorer"),
        comparison(services, a, a, name="axial_slr.risk"),  # a plot, but not curves
        comparison(services, a, a, name="compression.nml_regret"),  # no plot
        comparison(services, a, a, name="no.such"),
        comparison(services, a, older[0], a, older[1]),
    ]
    details = []
    for case in cases:
        with pytest.raises(InvalidFields) as err:
            figures.overlay_drawing(case)
        assert [(e["loc"], e["type"]) for e in err.value.errors] == [(["query", "ids"], "value_error")]
        details.append(err.value.detail)
    assert "cannot overlay" in details[0] and "cannot overlay" in details[1]
    assert "old-0, old-1" in details[4] and a.id not in details[4]


def test_a_compare_plot_is_shared_only_when_every_run_is_anonymous_and_keys_are_optional(
    services: Services, drawn: list[tuple[Drawing, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = principal(services, "estimators:run")
    a, b = stored(services, result=moead_result([4, 5], 2)), stored(services, result=moead_result([4, 6], 2))
    own = stored(services, result=moead_result([4, 7], 2), owner=alice)
    plot = figures.compare_plot(services, None, [a.id, b.id], "svg")
    assert plot == figures.Plot(b"overlay:svg:1", "image/svg+xml", False, True)
    assert drawn[0][0].data["results"] == [a.result, b.result]
    assert figures.compare_plot(services, alice, [a.id, own.id], "svg").shared is False
    assert figures.compare_plot(services, alice, [own.id, a.id], "svg").shared is False
    assert figures.compare_plot(services, admin(services), [a.id, b.id], "svg").shared is True
    monkeypatch.setattr(services, "settings", services.settings.model_copy(update={"require_keys": True}))
    assert figures.compare_plot(services, admin(services), [a.id, b.id], "svg").shared is False


def page(rows: list[dict[str, Any]], metric: str = "accuracy") -> benchmarks.LeaderboardPage:
    return benchmarks.LeaderboardPage("b", "public", metric, True, "best", 3, rows, [metric], None)


def row(sid: str, rank: int | None, value: float, metric: str = "accuracy") -> dict[str, Any]:
    scores = {metric: {"value": value, "ci_low": value - 0.1, "ci_high": value + 0.1, "n": 10}}
    return {"submission_id": sid, "rank": rank, "model": f"model-{sid}", "scores": scores}


def test_a_leaderboard_drawing_lists_the_ranked_rows_then_the_callers_own() -> None:
    top = [row("a", 1, 0.9), row("base", None, 0.8), row("b", 2, 0.7), row("x", 3, 0.6, metric="other")]
    drawing = figures.leaderboard_drawing(page(top), "films", row("me", 7, 0.2))
    assert drawing.kind == "leaderboard"
    assert drawing.data["title"] == "films: public split, answer key v3"
    assert drawing.data["metric"] == "accuracy" and drawing.data["higher_is_better"] is True
    expected = [("a", 1, 0.9, False), ("base", None, 0.8, False), ("b", 2, 0.7, False), ("me", 7, 0.2, True)]
    assert [(r["model"], r["rank"], r["value"], r["own"]) for r in drawing.data["rows"]] == [
        (f"model-{s}", rank, v, own) for s, rank, v, own in expected
    ]
    assert drawing.data["rows"][0] == {
        "rank": 1, "model": "model-a", "value": 0.9, "ci_low": pytest.approx(0.8), "ci_high": pytest.approx(1.0),
        "own": False,
    }  # fmt: skip
    shown = figures.leaderboard_drawing(page(top), "films", row("b", 2, 0.7))  # already shown: marked, not repeated
    assert [(r["model"], r["own"]) for r in shown.data["rows"]] == [
        ("model-a", False), ("model-base", False), ("model-b", True)
    ]  # fmt: skip
    alone = figures.leaderboard_drawing(page(top), "films")
    assert [r["own"] for r in alone.data["rows"]] == [False, False, False]


def test_a_leaderboard_plot_draws_the_top_rows_and_the_callers_best(
    services: Services, drawn: list[tuple[Drawing, str]]
) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write"))
    others = principal(services, "submissions:write", name="others")
    alice = principal(services, "submissions:write", name="alice")
    for i, correct in enumerate((9, 8, 7)):
        new = NewSubmission(f"m{i}", film_predictions(correct)["items"], {})
        submissions.submit(services, others, bench.row.id, new, None)
    submissions.submit(services, alice, bench.row.id, NewSubmission("mine", film_predictions(2)["items"], {}), None)
    plot = figures.leaderboard_plot(services, alice, bench.row.id, split="public", metric=None, fmt="png", top=2)
    assert plot == figures.Plot(b"leaderboard:png:1", "image/png", placeholder=False, shared=False)
    data = drawn[0][0].data
    assert [(r["rank"], r["model"], r["own"]) for r in data["rows"]] == [
        (1, "m0", False), (2, "m1", False), (4, "mine", True)
    ]  # fmt: skip
    assert [r["value"] for r in data["rows"]] == pytest.approx([0.9, 0.8, 0.2])
    assert data["title"] == "films: public split, answer key v1" and data["metric"] == "accuracy"
    anonymous = figures.leaderboard_plot(services, None, bench.row.id, split="public", metric=None, fmt="svg")
    assert anonymous.shared is False
    assert [r["model"] for r in drawn[1][0].data["rows"]] == ["m0", "m1", "m2", "mine"]  # top 30 by default
    at_most = figures.leaderboard_plot(services, None, bench.row.id, split="public", metric=None, fmt="svg", top=200)
    assert at_most.data == anonymous.data  # the same content: from the cache
    one = figures.leaderboard_plot(services, None, bench.row.id, split="public", metric=None, fmt="svg", top=1)
    assert one.data == b"leaderboard:svg:3" and [r["model"] for r in drawn[2][0].data["rows"]] == ["m0"]
    for top in (0, 201):
        with pytest.raises(InvalidFields) as err:
            figures.leaderboard_plot(services, None, bench.row.id, split="public", metric=None, fmt="svg", top=top)
        assert err.value.errors == [
            {"loc": ["query", "top"], "msg": "1-200", "type": "value_error"}
        ]  # fmt: skip
    assert len(drawn) == 3


def test_a_reports_plot_draws_the_papers_check_from_its_stored_runs_and_is_shared(
    services: Services, drawn: list[tuple[Drawing, str]]
) -> None:
    report_id = reproductions.run_check(services, "vimu", None, lambda f, m="": None)
    plot = figures.report_plot(services, "vimu", report_id, "svg")
    assert plot == figures.Plot(b"report:svg:1", "image/svg+xml", placeholder=False, shared=True)
    entry, row = reproductions.report(services, "vimu", report_id)
    results, outcome = reproductions.report_plot_inputs(services, entry, row)
    assert drawn[0][0] == Drawing("report", {"paper": "vimu", "results": results, "outcome": outcome})
    with pytest.raises(NotFound):
        figures.report_plot(services, "raven", report_id, "svg")


def test_draw_hands_a_report_to_its_papers_plot(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, Any, Any]] = []
    monkeypatch.setattr(reproductions, "draw_report", lambda *args: seen.append(args) or "figure")
    data = {"paper": "vimu", "results": [{"a": 1}], "outcome": {"figures": {}, "reason": "r"}}
    assert figures.draw(Drawing("report", data)) == "figure"
    assert seen == [("vimu", [{"a": 1}], {"figures": {}, "reason": "r"})]


def test_a_cached_figure_is_answered_while_another_is_drawn(
    drawn: list[tuple[Drawing, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = Drawing("run", {"a": 1})
    figures.figure(d, "svg", shared=True)
    monkeypatch.setattr(figures, "QUEUE_BUDGET_S", 0.01)
    figures._DRAW_LOCK.acquire()  # a drawing in progress
    try:
        assert figures.figure(d, "svg", shared=True) == figures.Plot(b"run:svg:1", "image/svg+xml", False, True)
    finally:
        figures._DRAW_LOCK.release()
    assert len(drawn) == 1


def test_the_placeholders_log_entry_gives_the_time_taken_in_milliseconds(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ticks = iter([10.0, 12.0])
    monkeypatch.setattr(figures, "time", types.SimpleNamespace(monotonic=lambda: next(ticks)))
    monkeypatch.setattr(figures, "_draw_bounded", lambda d, f: (_ for _ in ()).throw(RuntimeError("slow")))
    with caplog.at_level(logging.WARNING, logger="usecases.figures"):
        assert figures.figure(Drawing("run", {}), "svg", shared=False).placeholder
    assert [r.ms for r in caplog.records] == [2000]  # type: ignore[attr-defined]


def test_a_child_past_the_wall_budget_is_killed_after_a_second(forked: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(conn: Any, drawing: Drawing, fmt: str, cpu_budget_s: int) -> None:
        time.sleep(30)

    monkeypatch.setattr(figures, "_draw_in_child", stuck)
    monkeypatch.setattr(figures, "WALL_BUDGET_S", 0.05)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="took longer"):
        figures._draw_bounded(Drawing("leaderboard", board("m1")), "svg")
    assert time.monotonic() - started < 10


def test_only_an_estimator_runs_plot_is_drawn(services: Services, drawn: list[tuple[Drawing, str]]) -> None:
    as_scorer = stored(services, MOEAD, result=moead_result([4, 9], 2), kind="scorer")  # an estimator's name
    with pytest.raises(NotFound):
        figures.run_plot(services, None, as_scorer.id, "svg")
    assert drawn == []


def test_a_leaderboard_plot_shows_the_asked_metric_and_split_and_freezes_this_benchmarks_phases(
    services: Services, drawn: list[tuple[Drawing, str]]
) -> None:
    from db.repositories import phases as phase_repo
    from usecases import phases

    start = datetime.now(UTC)
    owner = principal(services, "benchmarks:write", "submissions:write")
    bench = stored_benchmark(services, owner).row.id
    other = stored_benchmark(services, owner, name="other").row.id
    window = {
        "starts_at": start + timedelta(hours=1), "ends_at": start + timedelta(hours=2), "splits": ["public"],
        "max_submissions_per_day": None, "max_submissions_total": None, "leaderboard_visibility": "public",
        "late_submissions": "accept",
    }  # fmt: skip
    mine = phases.create(services, owner, bench, {"name": "p", **window})
    theirs = phases.create(services, owner, other, {"name": "q", **window})
    services.clock = lambda: start + timedelta(hours=1, minutes=30)
    new = NewSubmission("m", film_predictions(7, 3)["items"], {})
    submissions.submit(services, owner, bench, new, None)
    services.clock = lambda: start + timedelta(hours=3)
    figures.leaderboard_plot(services, owner, bench, split="private", metric="coverage", fmt="svg")
    data = drawn[0][0].data
    assert data["metric"] == "coverage" and data["title"] == "films: private split, answer key v1"
    assert [(r["model"], r["own"], r["value"]) for r in data["rows"]] == [("m", True, pytest.approx(1.0))]
    with services.engines.read.connect() as conn:
        assert phase_repo.snapshot(conn, mine.id) is not None
        assert phase_repo.snapshot(conn, theirs.id) is None


def test_the_callers_own_row_is_their_best_on_the_asked_metric(
    services: Services, drawn: list[tuple[Drawing, str]]
) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write")).row.id
    others = principal(services, "submissions:write", name="others")
    alice = principal(services, "submissions:write", name="alice")
    submissions.submit(services, others, bench, NewSubmission("top", film_predictions(10)["items"], {}), None)
    wide = NewSubmission("wide", film_predictions(1, n_public=9)["items"], {})  # coverage 0.9, accuracy low
    narrow = NewSubmission("narrow", film_predictions(5, n_public=5)["items"], {})  # coverage 0.5, accuracy higher
    submissions.submit(services, alice, bench, wide, None)
    submissions.submit(services, alice, bench, narrow, None)
    figures.leaderboard_plot(services, alice, bench, split="public", metric="coverage", fmt="svg", top=1)
    rows = drawn[0][0].data["rows"]
    assert [(r["rank"], r["model"], r["own"]) for r in rows] == [(1, "top", False), (2, "wide", True)]
    assert [r["value"] for r in rows] == pytest.approx([1.0, 0.9])
    figures.leaderboard_plot(services, alice, bench, split="public", metric="accuracy", fmt="svg", top=1)
    assert [(r["rank"], r["model"]) for r in drawn[1][0].data["rows"]] == [(1, "top"), (2, "narrow")]
