"""The benchmark page's private split in a real browser under the server's Content-Security-Policy: without a key
it says how many rows the split holds and who sees them; a participant's key entered on the page is told it may not
see them; the owner's key shows the rows ``GET /v1/benchmarks/{id}/leaderboard?split=private`` answers it. The key
stays in sessionStorage and goes out as an Authorization header only: no URL the page requests carries it."""

from collections.abc import Iterator

import httpx
import pytest

from tests.browser.conftest import ADMIN
from tests.browser.test_csp import RECORD
from tests.factories import film_key_items, film_predictions

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD)
    yield context.new_page()
    context.close()


def _created(r: httpx.Response) -> dict:
    assert r.status_code == 201, r.text
    return r.json()


def test_the_private_split_with_no_key_a_participants_key_and_the_owners_key(server, page):
    owner = _created(
        httpx.post(f"{server}/v1/api-keys", json={"name": "olivia", "scopes": ["benchmarks:write"]}, headers=ADMIN)
    )["key"]
    as_owner = {"Authorization": f"Bearer {owner}"}
    key = {"items": film_key_items()}
    preds = film_predictions(6, 3)
    bench = _created(
        httpx.post(
            f"{server}/v1/benchmarks",
            json={"name": "films-access", "scorer": "film_mcq", "answer_key": key},
            headers=as_owner,
        )
    )
    invited = _created(
        httpx.post(
            f"{server}/v1/benchmarks/{bench['id']}/participants",
            json={"display_name": "Ada", "team": "Team A"},
            headers=as_owner,
        )
    )
    _created(
        httpx.post(
            f"{server}/v1/benchmarks/{bench['id']}/submissions",
            json={"model": "ada-1", "predictions": preds},
            headers={"Authorization": f"Bearer {invited['key']}"},
        )
    )
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(f"{server}/benchmarks/{bench['id']}?split=private")
    notice = page.locator("#restricted-notice").text_content()
    assert "has 1 row, visible to the benchmark's owners" in notice
    assert page.locator("#leaderboard").is_hidden() and "No submissions" not in page.content()

    page.fill("#api-key", invited["key"])
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#key-state:has-text('not one of the benchmark')")
    assert page.locator("#leaderboard").is_hidden()

    page.fill("#api-key", owner)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#leaderboard:not([hidden])")
    cells = page.locator("#leaderboard tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent.trim()))"
    )
    api = httpx.get(
        f"{server}/v1/benchmarks/{bench['id']}/leaderboard", params={"split": "private"}, headers=as_owner
    ).json()["items"]
    assert [(c[0], c[1], c[7]) for c in cells] == [(str(r["rank"]), r["model"], r["participant"]) for r in api]
    assert [c[1] for c in cells] == ["ada-1"] and cells[0][7] == "Team A"
    assert page.evaluate("window.__violations") == []
    assert not [u for u in urls if owner in u or invited["key"] in u]
