"""The web page in a real browser: Debian's headless Chromium driven by Playwright against a live server and
worker on 127.0.0.1. Screenshots are saved under the test's temporary directory."""

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from db.migrate import upgrade
from tests.conftest import REQUIRE_SERVICES
from tests.reliability.procs import env_for, free_port, running

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parent.parent / "service" / "fixtures"
ADMIN = {"Authorization": "Bearer ek_admin_reliability_key"}


def chromium_path() -> str | None:
    return os.environ.get("ESTIBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator:
    path = chromium_path()
    if path is None:
        if REQUIRE_SERVICES:
            pytest.fail("Debian's chromium is required (ESTIBENCH_REQUIRE_SERVICES=1) but not installed")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("web")
    url = f"sqlite:///{root / 'estibench.db'}"
    upgrade(url)
    env = env_for(url, root / "data")
    port = free_port()
    with running("api", env, port, root / "api.log"), running("worker", env, log=root / "worker.log"):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def page(browser, tmp_path: Path) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
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
    page.fill("#f-reps", "5")
    page.fill("#f-ns", "[8, 16, 32]")
    page.click("button[type=submit]")
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
    assert page.locator(".report h2").first.text_content() == "reproduced"
    page.wait_for_function("document.querySelector('.report-plot').naturalWidth > 0", timeout=30_000)
    page.screenshot(path=str(tmp_path / "reproduction.png"), full_page=True)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    page.goto(f"{server}/redoc")
    page.wait_for_selector("redoc [role=navigation], .menu-content", timeout=30_000)
