"""The web page in a real browser: Debian's headless Chromium driven by Playwright against a live server and
worker on 127.0.0.1. Screenshots are saved under the test's temporary directory."""

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import ADMIN, FIXTURES

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser, tmp_path: Path) -> Iterator:
    # The page's own behaviour is tested here (its CSP in test_csp.py): Playwright's string predicates are evaluated
    # in the page, which the CSP's script-src 'self' refuses.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    pg = context.new_page()
    outside: list[str] = []
    local = ("http://127.0.0.1", "blob:http://127.0.0.1")
    pg.on("requestfinished", lambda req: None if req.url.startswith(local) else outside.append(req.url))
    yield pg
    context.close()
    assert outside == [], f"the page loaded from outside the machine: {outside}"


def test_leaderboard_rows_in_the_rendered_page(server, page, tmp_path):
    key = json.loads((FIXTURES / "film_mcq_key.json").read_text())
    preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
    bench = httpx.post(
        f"{server}/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "description": "Film questions", "answer_key": key},
        headers=ADMIN,
    ).json()
    worse = {"items": [{**p, "choice_idx": 0} for p in preds["items"]]}
    for model, body in (("model-a", preds), ("model-b", worse)):
        r = httpx.post(
            f"{server}/v1/benchmarks/{bench['id']}/submissions",
            json={"model": model, "predictions": body},
            headers=ADMIN,
        )
        assert r.status_code == 201, r.text
    api_rows = httpx.get(f"{server}/v1/benchmarks/{bench['id']}/leaderboard").json()["items"]
    page.goto(f"{server}/benchmarks/{bench['id']}")
    cells = page.locator("#leaderboard tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent.trim()))"
    )
    assert [(c[0], c[1]) for c in cells] == [(str(r["rank"]), r["model"]) for r in api_rows]
    assert [float(c[2]) for c in cells] == pytest.approx([r["scores"]["accuracy"]["value"] for r in api_rows], abs=5e-5)
    assert cells[0][3].startswith("[0.3127")  # Wilson interval of 6/10 (the fixture's hand-computed figure)
    assert page.locator("#csv-link").get_attribute("href").endswith("format=csv")
    page.wait_for_function("document.getElementById('leaderboard-plot').naturalWidth > 0")
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)


def test_params_form_runs_an_estimator_and_shows_result_and_plot(server, page, tmp_path):
    page.goto(f"{server}/estimators/moead.omm_scaling")
    # no plot yet: the hidden image takes no room (the stylesheet's img rule must not override the attribute)
    assert page.locator("#plot").evaluate("img => getComputedStyle(img).display") == "none"
    page.fill("#f-reps", "5")
    page.fill("#f-ns", "[8, 16, 32]")
    page.click("#params-form button[type=submit]")
    page.wait_for_function("document.getElementById('result').textContent.includes('slope')", timeout=30_000)
    run = json.loads(page.locator("#result").text_content())
    assert run["name"] == "moead.omm_scaling" and [p["n"] for p in run["result"]["points"]] == [8, 16, 32]
    assert run["result"]["points"][0]["finished"] == 5
    page.wait_for_function("document.getElementById('plot').naturalWidth > 0", timeout=30_000)
    assert page.locator("#plot").get_attribute("src") == f"/v1/runs/{run['id']}/plot"
    page.screenshot(path=str(tmp_path / "estimator.png"), full_page=True)


def test_job_progress_updates_while_it_runs(server, page, tmp_path):
    job = httpx.post(
        f"{server}/v1/jobs",
        json={"kind": "estimator", "name": "test.slow_sum", "params": {"values": [1, 2], "steps": 30, "step_s": 0.15}},
    ).json()
    page.goto(f"{server}/jobs/{job['id']}")
    seen: list[float] = []
    for _ in range(200):
        seen.append(float(page.locator("#job-bar").evaluate("el => el.value")))
        if page.locator("#job-status").text_content() == "succeeded":
            break
        page.wait_for_timeout(100)
    assert page.locator("#job-status").text_content() == "succeeded"
    distinct = sorted(set(seen))
    assert len(distinct) >= 3 and 0 < distinct[1] < 1  # the bar moved through intermediate values
    assert page.locator("#job-run-link").text_content() == httpx.get(f"{server}/v1/jobs/{job['id']}").json()["run_id"]
    page.screenshot(path=str(tmp_path / "job.png"))


def test_catalog_reproduction_report_and_offline_docs(server, page, tmp_path):
    r = httpx.post(f"{server}/v1/reproductions/double-descent", headers=ADMIN)
    assert r.status_code == 202
    for _ in range(300):
        if httpx.get(f"{server}/v1/jobs/{r.json()['id']}").json()["status"] == "succeeded":
            break
        page.wait_for_timeout(100)
    page.goto(server + "/")
    names = page.locator("table.catalog tbody tr[data-estimator]").evaluate_all(
        "rows => rows.map(r => r.dataset.estimator)"
    )
    assert names == sorted(e["name"] for e in httpx.get(f"{server}/v1/estimators").json()["items"])
    page.screenshot(path=str(tmp_path / "catalog.png"), full_page=True)
    page.goto(f"{server}/reproductions/double-descent")
    assert page.locator(".report h2 .status").first.text_content() == "needs_models"  # the paper's badge
    assert page.locator("#bayes-no-peak .status").text_content() == "consistent"
    page.wait_for_function("document.querySelector('.report-plot').naturalWidth > 0", timeout=30_000)
    page.screenshot(path=str(tmp_path / "reproduction.png"), full_page=True)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    page.goto(f"{server}/redoc")
    page.wait_for_selector("redoc [role=navigation], .menu-content", timeout=30_000)
