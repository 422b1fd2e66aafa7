"""A challenge run from the benchmark page in a real browser under the server's Content-Security-Policy: the owner
signs in with the header's form and sees both splits and the phases (the open one counting down), invites a
participant; the participant signs in, uploads a .jsonl file with one bad line, reads that line's error, uploads the
fixed file and sees its row; the owner reads the per-item values and compares two submissions. No policy violation,
and no URL the page requests carries a key."""

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

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


def _cells(page, selector: str) -> list[list[str]]:
    return page.locator(f"{selector} tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent.trim()))"
    )


def _sign_in(page, key: str) -> None:
    page.fill("#api-key", key)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#key-forget:not([hidden])")


def _upload(page, items: list[dict]) -> None:
    """Choose a .jsonl file of ``items`` in the submission form and submit it."""
    lines = "".join(json.dumps(i) + "\n" for i in items).encode()
    page.set_input_files("#submit-file", {"name": "p.jsonl", "mimeType": "application/x-ndjson", "buffer": lines})
    page.click("#submit-form button[type=submit]")


def test_owner_and_participant_run_a_challenge_from_the_page(server, page):
    r = httpx.post(f"{server}/v1/api-keys", json={"name": "olivia", "scopes": ["benchmarks:write"]}, headers=ADMIN)
    owner = r.json()["key"]
    as_owner = {"Authorization": f"Bearer {owner}"}
    bench = httpx.post(
        f"{server}/v1/benchmarks",
        json={"name": "films-page", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
        headers=as_owner,
    ).json()
    seeded = httpx.post(
        f"{server}/v1/api-keys", json={"name": "seed", "scopes": ["submissions:write"]}, headers=ADMIN
    ).json()["key"]
    first = httpx.post(
        f"{server}/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "seed-8", "predictions": film_predictions(8, 3)},
        headers={"Authorization": f"Bearer {seeded}"},
    ).json()
    now = datetime.now(UTC)
    for name, starts, ends in (("warm-up", -1, 2), ("final", 3, 27)):
        made = httpx.post(
            f"{server}/v1/benchmarks/{bench['id']}/phases",
            json={
                "name": name,
                "starts_at": (now + timedelta(hours=starts)).isoformat(),
                "ends_at": (now + timedelta(hours=ends)).isoformat(),
            },
            headers=as_owner,
        )
        assert made.status_code == 201, made.text
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    # the owner: both splits, and a participant invited on the page
    page.goto(f"{server}/benchmarks/{bench['id']}?split=private")
    page.wait_for_selector("#phases-box:not([hidden])")
    phases = _cells(page, "#phases")
    assert [(p[0], p[4]) for p in phases] == [("warm-up", "public"), ("final", "public")]
    assert phases[0][3].startswith("open · ends in 1 h 59 min") and phases[1][3].startswith("upcoming · starts in 2 h")
    assert page.locator("#phases tr.open td").first.text_content() == "warm-up"
    _sign_in(page, owner)
    page.wait_for_selector("#key-who:has-text('signed in as olivia')")
    page.wait_for_selector("#leaderboard:not([hidden])")
    assert [c[1] for c in _cells(page, "#leaderboard")] == ["seed-8"]
    page.wait_for_selector("#owner:not([hidden])")
    page.wait_for_selector(f"#submissions tbody tr[data-submission='{first['id']}']")
    row = _cells(page, "#submissions")[0]
    assert (row[1], row[3], row[4]) == ("seed-8", "0.8", "0.75")  # 8 of 10 public, 3 of 4 private right
    page.fill("#invite-form input[name=display_name]", "Ada")
    page.fill("#invite-form input[name=team]", "Team A")
    page.click("#invite-form button[type=submit]")
    page.wait_for_selector("#invited:not([hidden])")
    ada = page.locator("#invited-key").text_content()
    assert ada.startswith("ek_")
    page.wait_for_selector("#participants tbody tr >> text=Team A")
    page.wait_for_selector("#audit tbody tr[data-action='participant.invited']")

    # the participant: a bad line named, then the fixed file's row
    page.click("#key-forget")
    page.wait_for_selector("#challenge-signin:not([hidden])")
    _sign_in(page, ada)
    page.wait_for_selector("#key-who:has-text('participant')")
    page.wait_for_selector("#participate:not([hidden])")
    assert page.locator("#owner").is_hidden()
    preds = film_predictions(5, 1)["items"]
    bad = [*preds[:2], {"item_id": "q2", "choice_idx": "two"}, *preds[3:]]
    page.fill("#submit-model", "ada-5")
    _upload(page, bad)
    page.wait_for_selector("#submit-errors li")
    refused = page.locator("#submit-errors li").all_text_contents()
    assert refused == ["line 3: choice_idx: Input should be a valid integer"]
    assert "1 error in the file" in page.locator("#submit-file-error").text_content()
    as_json = json.dumps({"items": bad}).encode()
    page.set_input_files("#submit-file", {"name": "p.json", "mimeType": "application/json", "buffer": as_json})
    page.click("#submit-form button[type=submit]")
    page.wait_for_selector("#submit-errors li >> text=item 3")
    refused = page.locator("#submit-errors li").all_text_contents()
    assert refused == ["item 3: choice_idx: Input should be a valid integer"]
    assert _cells(page, "#submissions") == []
    _upload(page, preds)
    page.wait_for_selector("#submissions tbody tr >> text=ada-5")
    assert page.locator("#submit-errors li").count() == 0
    row = _cells(page, "#submissions")[0]
    assert (row[1], row[2], row[3], row[4]) == ("ada-5", "Team A", "0.5", "owners only")

    # the owner again: per-item values and a comparison
    page.click("#key-forget")
    _sign_in(page, owner)
    page.wait_for_selector("#submissions tbody tr >> text=ada-5")
    ada_id = page.locator("#submissions tbody tr >> text=ada-5").locator("xpath=..").get_attribute("data-submission")
    page.select_option("#items-form select[name=submission]", ada_id)
    page.fill("#items-form input[name=filter]", "p")
    page.click("#items-form button[type=submit]")
    page.wait_for_selector("#items:not([hidden])")
    items = httpx.get(f"{server}/v1/submissions/{ada_id}/items", headers=as_owner).json()["items"]
    expected = sorted((i["item_id"], i["split"], i["value"]) for i in items if "p" in i["item_id"])
    shown = sorted((c[0], c[1], float(c[2])) for c in _cells(page, "#items"))
    assert shown == expected == [("p0", "private", 1.0)] + [(f"p{i}", "private", 0.0) for i in (1, 2, 3)]
    page.select_option("#compare-form select[name=a]", first["id"])
    page.select_option("#compare-form select[name=b]", ada_id)
    page.click("#compare-form button[type=submit]")
    page.wait_for_selector("#compare-items:not([hidden])")
    # seed-8 is right on q5, q6, q7 where ada-5 is wrong, never the other way: exact McNemar p = 2 * 0.5^3
    status = page.locator("#compare-status").text_content()
    assert "mcnemar_exact on 10 common public items" in status and "p = 0.25" in status
    assert [c[0] for c in _cells(page, "#compare-items")] == ["q5", "q6", "q7"]

    page.click("#participants tbody tr >> text=Revoke")
    page.wait_for_selector("#audit tbody tr[data-action='participant.revoked']")
    assert _cells(page, "#participants")[0][4] != ""  # revoked at
    assert httpx.get(f"{server}/v1/api-keys/self", headers={"Authorization": f"Bearer {ada}"}).status_code == 401

    assert page.evaluate("window.__violations") == []
    assert not [u for u in urls if owner in u or ada in u]
