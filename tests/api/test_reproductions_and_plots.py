"""Reproduction reports and figures over HTTP: run a check as a job, read it back with its runs and plot; run and
leaderboard plots in SVG and PNG; estimators without a plot answer 404 naming them."""

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.api.conftest import ADMIN, make_key
from usecases.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "service" / "fixtures"


@pytest.fixture
def jobs_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings.model_copy(update={"queue": "immediate"})), raise_server_exceptions=False) as c:
        yield c


def test_reproduction_list_covers_every_paper_with_its_status(client):
    items = client.get("/v1/reproductions").json()["items"]
    assert len(items) == 19
    status = {i["paper"]: i["status"] for i in items}
    assert status["cminhash"] == "ready" and status["film-mcq"] == "not_reproducible"
    film = next(i for i in items if i["paper"] == "film-mcq")
    assert "copyrighted" in film["reason"] and film["latest"] is None
    assert client.get("/v1/reproductions/no-such-paper").status_code == 404


def test_running_a_check_needs_the_admin_scope(jobs_client):
    assert jobs_client.post("/v1/reproductions/cminhash").status_code == 401
    runner = make_key(jobs_client, "estimators:run")
    assert jobs_client.post("/v1/reproductions/cminhash", headers=runner).status_code == 403


def test_cminhash_check_stores_a_report_with_its_runs_and_plot(jobs_client):
    r = jobs_client.post("/v1/reproductions/cminhash", headers=ADMIN)
    assert r.status_code == 202 and r.headers["Location"] == f"/v1/jobs/{r.json()['id']}"
    assert jobs_client.get(r.headers["Location"]).json()["status"] == "succeeded"
    latest = jobs_client.get("/v1/reproductions/cminhash").json()["latest"]
    assert latest["verdict"] == "reproduced" and latest["job_id"] == r.json()["id"]
    assert latest["figures"]["ratio_exact"] == pytest.approx(0.58799, abs=1e-4)  # exact, J=0.5, K=64, D=127
    runs = [jobs_client.get(f"/v1/runs/{rid}").json() for rid in latest["run_ids"]]
    assert [run["name"] for run in runs] == ["minhash.variance", "minhash.simulate"]
    assert runs[0]["result"]["ratio"] == latest["figures"]["ratio_exact"]
    svg = jobs_client.get(latest["plot_url"])
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    ET.fromstring(svg.content)  # well-formed SVG
    again = jobs_client.post("/v1/reproductions/cminhash", headers=ADMIN)
    detail = jobs_client.get("/v1/reproductions/cminhash").json()
    assert [rep["job_id"] for rep in detail["reports"]] == [again.json()["id"], r.json()["id"]]  # newest first
    assert detail["reports"][0]["run_ids"] == latest["run_ids"]  # the same params reuse the stored runs


def test_pending_and_unreproducible_papers(jobs_client):
    r = jobs_client.post("/v1/reproductions/hyperconnections", headers=ADMIN)
    if jobs_client.get("/v1/reproductions/hyperconnections").json()["status"] == "pending":
        assert r.status_code == 409 and "pending" in r.json()["detail"]
    r = jobs_client.post("/v1/reproductions/stakebench", headers=ADMIN)
    assert r.status_code == 202
    latest = jobs_client.get("/v1/reproductions/stakebench").json()["latest"]
    assert latest["verdict"] == "not_reproducible" and latest["run_ids"] == [] and latest["plot_url"] is None


def test_run_plot_formats_and_missing_plot(client):
    run = client.post("/v1/estimators/moead.omm_scaling", json={"r": 1, "reps": 5, "ns": [8, 16, 32]}).json()
    svg = client.get(f"/v1/runs/{run['id']}/plot")
    assert svg.headers["content-type"] == "image/svg+xml" and b"<svg" in svg.content
    png = client.get(f"/v1/runs/{run['id']}/plot", params={"format": "png"})
    assert png.headers["content-type"] == "image/png" and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    by_accept = client.get(f"/v1/runs/{run['id']}/plot", headers={"Accept": "image/png"})
    assert by_accept.content == png.content
    other = client.post(
        "/v1/estimators/minhash.variance", json={"intersection": 5, "union": 10, "universe": 101, "num_perm": 8}
    ).json()
    missing = client.get(f"/v1/runs/{other['id']}/plot")
    assert missing.status_code == 404 and "minhash.variance" in missing.json()["detail"]
    assert missing.headers["content-type"] == "application/problem+json"
    assert client.get("/v1/runs/nope/plot").status_code == 404


def test_leaderboard_plot_draws_each_submission_with_its_interval(client):
    key = json.loads((FIXTURES / "film_mcq_key.json").read_text())
    preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
    bench = client.post(
        "/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "description": "d", "answer_key": key},
        headers=ADMIN,
    ).json()
    writer = make_key(client, "submissions:write")
    for model in ("model-a", "model-b"):
        r = client.post(
            f"/v1/benchmarks/{bench['id']}/submissions", json={"model": model, "predictions": preds}, headers=writer
        )
        assert r.status_code == 201, r.text
    svg = client.get(f"/v1/benchmarks/{bench['id']}/leaderboard/plot")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    text = svg.content.decode()
    assert "1. model-a" in text and "2. model-b" in text and "accuracy (higher is better)" in text
    assert client.get(f"/v1/benchmarks/{bench['id']}/leaderboard/plot", params={"split": "private"}).status_code == 403
