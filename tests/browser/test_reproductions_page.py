"""The reproductions page in Debian's headless Chromium (Playwright) against a live API process on 127.0.0.1: the
ledger counts the rendered table shows are those of GET /v1/reproductions, paper by paper and status by status."""

from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser) -> Iterator:
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    yield pg
    pg.close()


def test_reproductions_page_counts_equal_the_api(server, page, tmp_path):
    items = httpx.get(f"{server}/v1/reproductions").json()["items"]
    page.goto(f"{server}/reproductions")
    statuses = page.locator("#reproductions thead th.status").all_text_contents()
    rows = page.locator("#reproductions tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.paper, ...[...r.querySelectorAll('td')].map(td => td.textContent.trim())])"
    )
    assert [r[0] for r in rows] == [i["paper"] for i in items]  # every paper, in the API's order
    for row, item in zip(rows, items, strict=True):
        counts = Counter(c["status"] for c in item["claims"])
        _, _title, shown_badge, shown_total, *per_status, _check = row
        assert shown_badge == item["badge"] and int(shown_total) == len(item["claims"]), item["paper"]
        assert [int(n or 0) for n in per_status] == [counts[s] for s in statuses], item["paper"]
    shown = sum(int(n or 0) for row in rows for n in row[4:-1])
    assert shown == sum(len(i["claims"]) for i in items)
    page.screenshot(path=str(tmp_path / "reproductions.png"), full_page=True)
