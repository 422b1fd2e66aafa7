"""The Content-Security-Policy in a real browser: Swagger UI, ReDoc, a benchmark page and a figure render under
the policies the server sends, and the only violation Chromium reports (``securitypolicyviolation`` events and
console messages, collected from the first script on) is ReDoc's CDN logo, blocked on purpose."""

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import ADMIN, FIXTURES

pytestmark = pytest.mark.slow
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
"""ReDoc's side menu links its logo from a CDN: the policy blocks it (the one violation expected)."""
RECORD = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD)
    pg = context.new_page()
    yield pg
    context.close()


def test_docs_redoc_benchmark_page_and_figure_render_with_no_violation(server, page, tmp_path: Path):
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=90_000)  # the inline start-up script ran
    assert page.locator(".swagger-ui .opblock").count() > 10
    found += page.evaluate("window.__violations")
    page.goto(f"{server}/redoc")
    page.wait_for_selector("h1", timeout=90_000)
    assert "estibench" in page.locator("h1").first.text_content()
    found += page.evaluate("window.__violations")
    key = json.loads((FIXTURES / "film_mcq_key.json").read_text())
    preds = json.loads((FIXTURES / "film_mcq_predictions.json").read_text())
    bench = httpx.post(
        f"{server}/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "description": "d", "answer_key": key},
        headers=ADMIN,
    ).json()
    r = httpx.post(
        f"{server}/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "$x_{i}$", "predictions": preds},
        headers=ADMIN,
    )
    assert r.status_code == 201, r.text
    page.goto(f"{server}/benchmarks/{bench['id']}")
    page.wait_for_function("document.getElementById('leaderboard-plot').naturalWidth > 0", timeout=60_000)
    found += page.evaluate("window.__violations")
    page.goto(f"{server}/v1/benchmarks/{bench['id']}/leaderboard/plot")  # the SVG as a document: its own policy
    assert page.locator("svg").count() == 1
    page.screenshot(path=str(tmp_path / "plot.png"))
    found += page.evaluate("window.__violations")
    assert found and all(REDOC_LOGO in v for v in found), found  # blocked on purpose; nothing else
