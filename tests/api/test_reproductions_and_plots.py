"""Reproduction reports and figures over HTTP: the committed claim ledger on a fresh install, a check run as a job
that replaces its paper's rows, read back with its runs and plot, the pages that show the ledger; run and
leaderboard plots in SVG and PNG; estimators without a plot answer 404 naming them."""

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN, api_key, serving
from usecases.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "service" / "fixtures"


@pytest.fixture
def jobs_client(settings: Settings) -> Iterator[TestClient]:
    with serving(settings, queue="immediate") as c:
        yield c


def test_reproduction_list_serves_the_committed_ledger_of_every_paper(client):
    """A fresh install (no report stored) serves each paper's committed ledger and its badge."""
    items = client.get("/v1/reproductions").json()["items"]
    assert len(items) == 19
    by_paper = {i["paper"]: i for i in items}
    assert by_paper["cminhash"]["status"] == "ready" and by_paper["film-mcq"]["status"] == "not_reproducible"
    film = by_paper["film-mcq"]
    assert "public-domain" in film["reason"] and "copyrighted" not in film["reason"] and film["latest"] is None
    assert film["badge"] == "needs_models" and film["claims"][0]["needs"]
    pc = by_paper["predictive-coding"]
    assert pc["badge"] == "contradicted" and pc["ledger_date"]  # the depth claim: the gap falls past depth 6
    claim = next(c for c in pc["claims"] if c["id"] == "pc-more-efficient")
    assert set(claim) == {
        "id",
        "text",
        "headline",
        "status",
        "expected_source",
        "expected",
        "measured",
        "tolerance",
        "evidence",
        "mutation",
        "needs",
        "reconstructed",
    }
    assert set(claim["evidence"]) == {"run_ids", "plot_url", "computation"} and claim["evidence"]["run_ids"] == []
    stake = {c["id"]: c["status"] for c in by_paper["stakebench"]["claims"]}
    assert stake["odds-baseline"] == "needs_data" and stake["directed-accuracy"] == "needs_models"
    assert client.get("/v1/reproductions/no-such-paper").status_code == 404


def test_running_a_check_needs_the_admin_scope(jobs_client):
    assert jobs_client.post("/v1/reproductions/cminhash").status_code == 401
    runner = api_key(jobs_client, "estimators:run")
    assert jobs_client.post("/v1/reproductions/cminhash", headers=runner).status_code == 403


@pytest.mark.slow
def test_a_rerun_replaces_the_papers_rows_with_its_runs_and_plot(jobs_client):
    r = jobs_client.post("/v1/reproductions/double-descent", headers=ADMIN)
    assert r.status_code == 202 and r.headers["Location"] == f"/v1/jobs/{r.json()['id']}"
    assert jobs_client.get(r.headers["Location"]).json()["status"] == "succeeded"
    paper = jobs_client.get("/v1/reproductions/double-descent").json()
    latest = paper["latest"]
    assert latest["badge"] == paper["badge"] == "needs_models" and latest["job_id"] == r.json()["id"]
    claims = {c["id"]: c for c in paper["claims"]}
    peak = claims["bayes-no-peak"]
    assert peak["status"] == "consistent" and peak["evidence"]["run_ids"] == latest["run_ids"]
    assert peak["evidence"]["plot_url"] == latest["plot_url"]
    assert peak["measured"]["rf_peak_width_over_n"] == 1.0  # the MLE peaks at p = n = 40
    assert claims["five-times-peak"]["expected"] == {"mle_over_bayes_at_peak": 5.0}  # the abstract's "five times"
    runs = [jobs_client.get(f"/v1/runs/{rid}").json() for rid in latest["run_ids"]]
    assert [run["result"]["experiment"] for run in runs] == ["rf_regression", "cell_model", "rf_regression"]
    mle = [row["mle_ce"] for row in runs[0]["result"]["rows"]]
    assert latest["figures"]["mle_peak_over_min"] == max(mle) / min(mle)  # read from the stored run's rows
    svg = jobs_client.get(latest["plot_url"])
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    ET.fromstring(svg.content)  # well-formed SVG
    again = jobs_client.post("/v1/reproductions/double-descent", headers=ADMIN)
    detail = jobs_client.get("/v1/reproductions/double-descent").json()
    assert [rep["job_id"] for rep in detail["reports"]] == [again.json()["id"], r.json()["id"]]  # newest first
    assert detail["reports"][0]["run_ids"] == latest["run_ids"]  # the same params reuse the stored runs
    other = jobs_client.get("/v1/reproductions/unrolling").json()
    assert other["latest"] is None and other["claims"][0]["evidence"]["run_ids"] == []  # still the committed ledger


@pytest.mark.slow
def test_pending_and_unreproducible_papers(jobs_client):
    r = jobs_client.post("/v1/reproductions/hyperconnections", headers=ADMIN)
    if jobs_client.get("/v1/reproductions/hyperconnections").json()["status"] == "pending":
        assert r.status_code == 409 and "pending" in r.json()["detail"]
    r = jobs_client.post("/v1/reproductions/stakebench", headers=ADMIN)
    assert r.status_code == 202
    paper = jobs_client.get("/v1/reproductions/stakebench").json()
    latest = paper["latest"]
    assert latest["badge"] == "needs_models" and latest["run_ids"] == [] and latest["plot_url"] is None
    assert [c["status"] for c in paper["claims"]].count("needs_data") == 1


def test_pages_show_the_ledger_with_statuses_and_needs(client):
    page = client.get("/reproductions").text
    assert 'class="status contradicted">contradicted' in page  # predictive coding's badge
    assert "released data set (CC-BY 4.0" in page  # the needs list names StakeBench's release
    assert 'id="status-definitions"' in page and "no check yet" in page
    paper = client.get("/reproductions/predictive-coding").text
    assert 'id="pc-more-efficient"' in paper and "especially pronounced in deep" in paper
    assert "falls to" in paper and "depth 12" in paper  # where and by how much it is contradicted
    home = client.get("/").text
    total = sum(len(i["claims"]) for i in client.get("/v1/reproductions").json()["items"])
    assert f"{total} claims of 19 papers" in home


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
    writer = api_key(client, "submissions:write")
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
