"""``GET /v1/runs/compare/plot``: the curves of several runs of one estimator on one figure, drawn through the
figures' render path; a 422 naming ``ids`` for an estimator that cannot overlay, another version or a bad
selection, a 404 for a run the caller cannot see. Every overlay an estimator declares is checked against its own
run's result."""

import dataclasses
import json
import math
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from db.repositories import runs as runs_repo
from service.plot_overlay import LINE_STYLES, curve_gid, overlay_figure
from service.registry import ESTIMATORS, load_all, no_progress
from tests.factories import api_key
from usecases import figures, runs
from usecases.settings import Settings

URL = "/v1/estimators/moead.omm_scaling"
EXAMPLES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "estimator_examples.json").read_text()
)["estimators"]


OVERLAID = [
    "axial_slr.pgd",
    "compression.double_descent",
    "fdslm.perception_vector",
    "layer_patching.plan",
    "moead.omm_scaling",
    "sae.hierarchical_train",
    "snn.threshold_tail",
    "steering.persona_vector",
    "unrolling.jacobian_error",
]
"""The estimators whose plot is curves against one abscissa (the others draw bars, scatters or spectra)."""


@pytest.fixture(autouse=True)
def _no_remembered_figures() -> None:
    figures._CACHE.clear()


def _run(client: TestClient, params: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    r = client.post(URL, json=params, headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def test_two_runs_overlaid_with_their_own_points(client: TestClient) -> None:
    a = _run(client, {"ns": [4, 6], "reps": 2})
    b = _run(client, {"ns": [4, 6, 8], "reps": 3})
    ids = f"{a['id']},{b['id']}"

    svg = client.get("/v1/runs/compare/plot", params={"ids": ids})
    assert svg.status_code == 200, svg.text
    assert svg.headers["content-type"] == "image/svg+xml" and "x-plot-status" not in svg.headers
    assert svg.headers["cache-control"] == "public, max-age=86400"  # two anonymous runs
    # one curve (mean runtime against n) per run, each an SVG group named after its run and curve
    assert re.findall(r'id="(overlay-run\d+-curve\d+)"', svg.text) == [curve_gid(0, 0), curve_gid(1, 0)]
    png = client.get("/v1/runs/compare/plot", params={"ids": ids, "format": "png"})
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n" and len(png.content) > 1000

    # the figure before rendering: run i's line is its own result's (n, mean) points, in colour Ci
    comparison = runs.compare_runs(client.app.state.services, None, [a["id"], b["id"]])
    fig = figures.draw(figures.overlay_drawing(comparison))
    lines = {line.get_gid(): line for line in fig.axes[0].get_lines()}
    assert sorted(lines) == [curve_gid(0, 0), curve_gid(1, 0)]
    for i, run in enumerate((a, b)):
        line = lines[curve_gid(i, 0)]
        points = run["result"]["points"]
        assert list(line.get_xdata()) == [p["n"] for p in points]
        assert list(line.get_ydata()) == [p["mean"] for p in points]
        assert line.get_color() == f"C{i}" and line.get_linestyle() == LINE_STYLES[0]
        assert line.get_label() == f"run {i + 1} ({run['id'][:8]}): mean runtime"
    assert (fig.axes[0].get_xscale(), fig.axes[0].get_yscale()) == ("log", "log")
    # hand check of the known values: 2 replicates at n = 4 finishing after 14 evaluations on average
    assert a["result"]["points"][0]["n"] == 4 and len(lines[curve_gid(1, 0)].get_xdata()) == 3


def test_refusals_name_ids(client: TestClient, settings: Settings) -> None:
    a, b = _run(client, {"ns": [4, 6], "reps": 2}), _run(client, {"ns": [4, 8], "reps": 2})
    nml = [
        client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": 2, "n": n}).json()["id"]
        for n in (2, 3)
    ]  # no plot at all
    bars = [
        client.post("/v1/estimators/minhash.variance", json={"intersection": 1, "union": 2, "num_perm": k}).json()["id"]
        for k in (4, 8)
    ]
    for ids in (",".join(nml), ",".join(bars), a["id"], f"{a['id']},{a['id']}", f"{a['id']},{nml[0]}"):
        r = client.get("/v1/runs/compare/plot", params={"ids": ids})
        assert r.status_code == 422, (ids, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["errors"][0]["loc"] == ["query", "ids"], ids
    assert "cannot overlay" in client.get("/v1/runs/compare/plot", params={"ids": ",".join(nml)}).json()["detail"]
    assert client.get("/v1/runs/compare/plot", params={"ids": f"{a['id']},nope"}).status_code == 404
    bad_format = client.get("/v1/runs/compare/plot", params={"ids": f"{a['id']},{b['id']}", "format": "gif"})
    assert bad_format.status_code == 422 and bad_format.json()["errors"][0]["loc"] == ["query", "format"]

    alice, bob = api_key(client, "estimators:run", name="alice"), api_key(client, "estimators:run", name="bob")
    own = _run(client, {"ns": [4, 10], "reps": 2}, alice)
    assert client.get("/v1/runs/compare/plot", params={"ids": f"{a['id']},{own['id']}"}, headers=bob).status_code == 404
    mine = client.get("/v1/runs/compare/plot", params={"ids": f"{a['id']},{own['id']}"}, headers=alice)
    assert mine.status_code == 200 and mine.headers["cache-control"] == "private, no-cache"

    eng = create_engine(settings.database_url, poolclass=NullPool)
    with eng.begin() as conn:
        row = runs_repo.get(conn, a["id"])
        assert row is not None
        old = dataclasses.replace(row, id=str(uuid.uuid4()), version="0", params_sha256="0" * 64)
        runs_repo.insert(conn, old)
    eng.dispose()
    r = client.get("/v1/runs/compare/plot", params={"ids": f"{a['id']},{old.id}"})
    assert r.status_code == 422 and old.id in r.json()["detail"] and a["id"] not in r.json()["detail"]


def _points(x: Any, y: Any) -> list[tuple[float, float]]:
    """The finite (x, y) pairs of a series (a gap is None or NaN)."""
    return [(float(a), float(b)) for a, b in zip(x, y, strict=True) if b is not None and math.isfinite(float(b))]


@pytest.mark.slow
def test_every_declared_overlay_draws_its_runs_curves() -> None:
    """Each estimator declaring an overlay, on its example params: every curve is a series its own single-run plot
    draws (the same finite points), and two runs overlaid are twice its curves."""
    load_all()
    declared = sorted(name for name, spec in ESTIMATORS.items() if spec.overlay is not None)
    assert declared == OVERLAID
    for name in declared:
        spec = ESTIMATORS[name]
        assert spec.overlay is not None and spec.plot is not None
        result = spec.fn(spec.params_model.model_validate(EXAMPLES[name]), no_progress)
        curves = spec.overlay(result)
        drawn = [
            _points(line.get_xdata(), line.get_ydata()) for ax in spec.plot(result).axes for line in ax.get_lines()
        ]
        assert curves.curves, name
        for curve in curves.curves:
            assert _points(curve.x, curve.y) in drawn, (name, curve.label)
        fig = overlay_figure(name, [("run 1", curves), ("run 2", curves)])
        assert len(fig.axes[0].get_lines()) == 2 * len(curves.curves), name
