"""Figures drawn from user text: every name drawn as it is (no mathtext), cut at 60 characters; drawn once per
content; a figure over its budget is a placeholder image (200, ``X-Plot-Status: placeholder``), never a 500; cache
headers follow the run's visibility."""

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN, api_key
from usecases import figures

FIXTURES = Path(__file__).resolve().parent.parent / "service" / "fixtures"
FRAC = r"$\frac{1}{$"
"""Unbalanced mathtext: matplotlib's parser raises on it."""
NESTED = "x^{" * 30 + "$"
"""30 nested superscripts: RecursionError in the mathtext layout."""
REPEATED = "$x_{i}$" * 12
"""84 characters of subscripts: seconds of mathtext layout per label."""


@pytest.fixture(autouse=True)
def _no_remembered_figures() -> None:
    figures._CACHE.clear()


def hostile_leaderboard(client: TestClient) -> str:
    key = json.loads((FIXTURES / "film_mcq_key.json").read_text())
    preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
    bench = client.post(
        "/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "description": "d", "answer_key": key},
        headers=ADMIN,
    ).json()
    writer = api_key(client, "submissions:write")
    for model in (FRAC, NESTED, REPEATED):
        r = client.post(
            f"/v1/benchmarks/{bench['id']}/submissions", json={"model": model, "predictions": preds}, headers=writer
        )
        assert r.status_code == 201, r.text
    return bench["id"]


def rows(*models: str) -> dict:
    return {
        "rows": [
            {"rank": i + 1, "model": m, "value": 0.5, "ci_low": 0.25, "ci_high": 0.75} for i, m in enumerate(models)
        ],
        "metric": "accuracy",
        "higher_is_better": True,
        "title": "$t$",
    }


def test_names_are_drawn_as_they_are_and_cut_at_60_characters():
    import matplotlib  # here, not at collection

    with matplotlib.rc_context(figures.PLAIN_TEXT):
        fig = figures.leaderboard_figure(rows(FRAC, NESTED, REPEATED))
        figures.render(fig, "png")  # mathtext would raise on FRAC and recurse on NESTED
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [f"3. {REPEATED[:59]}…", f"2. {NESTED[:59]}…", f"1. {FRAC}"]
    assert len(labels[0]) == len("3. ") + 60
    assert all(not t._parse_math for t in fig.axes[0].get_yticklabels()) and fig.axes[0].title.get_text() == "$t$"


def test_a_hostile_leaderboard_plot_is_drawn_and_parallel_requests_all_succeed(client):
    bench = hostile_leaderboard(client)
    url = f"/v1/benchmarks/{bench}/leaderboard/plot"
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda fmt: client.get(url, params={"format": fmt}), ["svg", "png", "svg", "png"]))
    assert [a.status_code for a in answers] == [200] * 4
    assert all("x-plot-status" not in a.headers for a in answers)
    assert answers[0].content == answers[2].content and answers[0].content.startswith(b"<?xml")
    assert answers[1].content == answers[3].content and answers[1].content[:8] == b"\x89PNG\r\n\x1a\n"
    assert answers[0].headers["cache-control"] == "private, no-cache"
    assert answers[0].headers["vary"] == "Authorization, X-API-Key"


def test_the_same_content_is_drawn_once(client, monkeypatch):
    bench = hostile_leaderboard(client)
    drawn = []
    draw = figures._draw_bounded
    monkeypatch.setattr(figures, "_draw_bounded", lambda d, fmt: drawn.append(d) or draw(d, fmt))
    url = f"/v1/benchmarks/{bench}/leaderboard/plot"
    first, again = client.get(url), client.get(url)
    assert first.content == again.content and len(drawn) == 1
    preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
    writer = api_key(client, "submissions:write", name="late")
    r = client.post(f"/v1/benchmarks/{bench}/submissions", json={"model": "late", "predictions": preds}, headers=writer)
    assert r.status_code == 201
    assert client.get(url).content != first.content and len(drawn) == 2  # a new row: new content, drawn again
    assert [r["model"] for r in drawn[1].data["rows"]][-1] == "late"


@pytest.mark.parametrize(
    ("budget", "value", "reason"),
    [
        ("MAX_BYTES", 100, "the figure is larger than 100 bytes"),
        ("WALL_BUDGET_S", 0.0, "drawing took longer than 0 s"),
        ("MAX_WAITING", 0, "0 requests already wait for a drawing slot"),
    ],
)
def test_a_figure_over_its_budget_is_a_logged_placeholder(client, monkeypatch, caplog, budget, value, reason):
    bench = hostile_leaderboard(client)
    monkeypatch.setattr(figures, budget, value)
    with caplog.at_level(logging.WARNING, logger="usecases.figures"):
        svg = client.get(f"/v1/benchmarks/{bench}/leaderboard/plot")
        png = client.get(f"/v1/benchmarks/{bench}/leaderboard/plot", params={"format": "png"})
    assert svg.status_code == png.status_code == 200
    assert svg.headers["x-plot-status"] == png.headers["x-plot-status"] == "placeholder"
    assert svg.content == figures.PLACEHOLDERS["svg"] and svg.headers["content-type"] == "image/svg+xml"
    assert png.content == figures.PLACEHOLDERS["png"] and png.headers["cache-control"] == "no-store"
    assert [r.reason for r in caplog.records] == [reason, reason]  # type: ignore[attr-defined]
    monkeypatch.undo()
    assert "x-plot-status" not in client.get(f"/v1/benchmarks/{bench}/leaderboard/plot").headers  # not cached


def test_a_drawing_over_its_cpu_budget_is_stopped(monkeypatch, caplog):
    monkeypatch.setattr(figures, "CPU_BUDGET_S", 1)
    # 1,000 rows take about 10 s of CPU (0.9-1.5 s for 100 rows on this machine kind): ten times the budget or more.
    drawing = figures.Drawing("leaderboard", rows(*[f"model {i}" for i in range(1000)]))
    with caplog.at_level(logging.WARNING, logger="usecases.figures"):
        plot = figures.figure(drawing, "png", shared=True)
    assert plot.placeholder and plot.data == figures.PLACEHOLDERS["png"]
    assert [r.reason for r in caplog.records] == ["drawing used more than 1 s of CPU time"]  # type: ignore[attr-defined]


def test_a_plot_of_a_keyed_run_is_private_and_an_anonymous_one_public(client):
    params = {"r": 1, "reps": 5, "ns": [8, 16]}
    public = client.post("/v1/estimators/moead.omm_scaling", json=params).json()
    runner = api_key(client, "estimators:run")
    keyed = client.post("/v1/estimators/moead.omm_scaling", json={**params, "reps": 6}, headers=runner).json()
    shared = client.get(f"/v1/runs/{public['id']}/plot")
    assert shared.headers["cache-control"] == "public, max-age=86400" and "vary" not in shared.headers
    own = client.get(f"/v1/runs/{keyed['id']}/plot", headers=runner)
    assert own.status_code == 200 and own.headers["cache-control"] == "private, no-cache"
    assert own.headers["vary"] == "Authorization, X-API-Key"
    assert client.get(f"/v1/runs/{keyed['id']}/plot").status_code == 404
