"""The run pages in a real browser under the server's Content-Security-Policy (no bypass): the runs table shows what
``GET /v1/runs`` answers the key entered on the page, filtered and sorted; a run's page shows its params, result,
plot and tags, and runs it again from the estimator's form pre-filled with its params; two runs compared side by side
with their curves overlaid. The key stays in sessionStorage: no URL the page requests carries it."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import ADMIN
from tests.browser.test_csp import RECORD

pytestmark = pytest.mark.slow
SCALING = "moead.omm_scaling"


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD)
    yield context.new_page()
    context.close()


def _key(server: str) -> str:
    r = httpx.post(f"{server}/v1/api-keys", json={"name": "pages", "scopes": ["estimators:run"]}, headers=ADMIN)
    assert r.status_code == 201, r.text
    return r.json()["key"]


def _cells(page, selector: str) -> list[list[str]]:
    return page.locator(f"{selector} tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('th, td')].map(c => c.textContent.trim()))"
    )


def test_filter_open_rerun_and_compare(server, page, tmp_path: Path):
    key = _key(server)
    auth = {"Authorization": f"Bearer {key}"}
    made = [
        httpx.post(f"{server}/v1/estimators/{SCALING}", json={"ns": ns, "reps": 2}, headers=auth).json()
        for ns in ([4, 6], [4, 8], [4, 10])
    ]
    other = httpx.post(f"{server}/v1/estimators/compression.nml_regret", json={"num_symbols": 2, "n": 3}, headers=auth)
    assert other.status_code == 200 and all("id" in m for m in made)
    httpx.patch(f"{server}/v1/runs/{made[0]['id']}", json={"tags": {"exp": "a"}, "note": "first"}, headers=auth)

    requested: list[str] = []
    page.on("request", lambda req: requested.append(req.url))

    # the table: filtered by name and a param filter, as GET /v1/runs answers the key
    page.goto(f"{server}/runs")
    page.fill("#api-key", key)
    page.click("#key-form button[type=submit]")
    page.select_option("#runs-filter select[name=name]", SCALING)
    page.fill("#runs-filter textarea[name=filter]", "param.reps=2")
    page.click("#runs-filter button[type=submit]")
    page.wait_for_selector("#runs-status:text('3 runs')")
    listed = httpx.get(f"{server}/v1/runs", params={"name": SCALING, "filter": "param.reps=2"}, headers=auth).json()
    rows = page.locator("#runs-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert rows == [r["id"] for r in listed["items"]] == [m["id"] for m in reversed(made)]
    headers = page.locator("#runs-table thead th").all_text_contents()
    assert "slope" in headers and "bootstrap" in headers  # scalar result leaves of this estimator
    page.click("#runs-table thead th[data-sort='result.slope']")
    page.wait_for_selector("#runs-table thead th[data-sort='result.slope']:text('▼')")
    by_slope = httpx.get(
        f"{server}/v1/runs", params={"name": SCALING, "filter": "param.reps=2", "sort": "result.slope"}, headers=auth
    ).json()["items"]
    rows = page.locator("#runs-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert rows == [r["id"] for r in by_slope]
    slope_col = headers.index("slope")
    shown = [float(c[slope_col]) for c in _cells(page, "#runs-table")]
    assert shown == pytest.approx([r["result"]["slope"] for r in by_slope], rel=1e-12)
    page.screenshot(path=str(tmp_path / "runs.png"), full_page=True)

    # without the key, the runs made with it are not listed (the page shows what GET /v1/runs answers anonymously)
    page.click("#key-forget")
    page.wait_for_selector("#runs-status:text('0 runs')")
    page.fill("#api-key", key)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#runs-status:text('3 runs')")

    # one run's page: params, result, plot, tags and note, the run-again link
    page.click(f"#runs-table tbody tr[data-run='{made[0]['id']}'] a")
    page.wait_for_selector("#run[data-ready='1']")
    params = dict((c[0], c[1]) for c in _cells(page, "#run-params"))
    assert params["ns"] == "[4,6]" and params["reps"] == "2"
    result = dict((c[0], c[1]) for c in _cells(page, "#run-result"))
    assert float(result["slope"]) == made[0]["result"]["slope"]
    assert page.locator("#run-tags li").all_text_contents() == ["exp=a"]
    assert page.locator("#run-note").text_content() == "first"
    assert page.locator("#run-plot").get_attribute("src").startswith("data:image/svg+xml;base64,")
    assert page.locator("#run-plot-box").is_visible()
    page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

    # run again: the estimator's form pre-filled with the run's params, submitted with the key
    page.click("#run-again")
    page.wait_for_selector("#params-form[data-prefilled]")
    assert page.input_value("#f-ns") == "[4,6]" and page.input_value("#f-reps") == "2"
    page.fill("#f-reps", "3")
    page.click("#params-form button[type=submit]")
    page.wait_for_selector("#run-link:not([hidden])", timeout=30_000)
    rerun_id = page.locator("#run-link").get_attribute("href").removeprefix("/runs/")
    rerun = httpx.get(f"{server}/v1/runs/{rerun_id}", headers=auth).json()
    assert rerun["params"]["ns"] == [4, 6] and rerun["params"]["reps"] == 3
    assert httpx.get(f"{server}/v1/runs/{rerun_id}").status_code == 404  # made with the tab's key: not anonymous

    # compare two runs: the params that differ, results side by side, the curves overlaid
    page.goto(f"{server}/runs?name={SCALING}")
    page.wait_for_selector("#runs-status:text('4 runs')")
    for run in made[:2]:
        page.check(f"#runs-table tbody tr[data-run='{run['id']}'] input[type=checkbox]")
    page.click("#runs-compare")
    page.wait_for_selector("#compare[data-ready='1']")
    differing = _cells(page, "#compare-params")
    assert {row[0] for row in differing} == {"ns"}
    ids = {c[0]: c[1:] for c in _cells(page, "#compare-result")}
    assert [float(v) for v in ids["slope"]] == [m["result"]["slope"] for m in made[:2]]
    assert page.locator("#compare-plot").get_attribute("src").startswith("data:image/svg+xml;base64,")
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)

    # an unknown run: an HTML 404 page
    missing = page.goto(f"{server}/runs/00000000-0000-4000-8000-000000000000")
    assert missing.status == 404 and missing.headers["content-type"].startswith("text/html")
    assert page.locator("h1").text_content() == "Not found"

    assert page.evaluate("window.__violations") == []
    assert not [u for u in requested if key in u]
    assert all(u.startswith(("http://127.0.0.1", "data:")) for u in requested)
