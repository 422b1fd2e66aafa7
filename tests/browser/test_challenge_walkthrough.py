"""A whole challenge with phases ending, on the benchmark page in a real browser, the server's clock (and the
browser's) set by the test: the owner's benchmark has a public phase ("sprint", refusing late submissions) and a
hidden_until_end one ("final", public and private splits, accepting them); the owner invites two participants on
the page; each signs in and uploads .jsonl files (one with a bad line, fixed) in both phases; the anonymous page
shows nothing of the final's board before its end; when each phase ends the page shows its frozen board with the
freezing time, the final's private split revealed; a submission between the phases is refused with the phase
times, one after the final is stored late and never ranked; a withdrawal and a new answer key's re-scoring after
the ends change the benchmark's board, not the frozen ones.

Accuracies by hand (``film_key_items``: 10 public items, 4 private; ``film_predictions(c, p)`` gets the first ``c``
public and ``p`` private right): ada-6 (6, 1) 0.6; bo-8 (8, 2) 0.8; ada-7 (7, 3) 0.7 and private 0.75; bo-5 (5, 4)
0.5 and private 1; ada-9 (9, 4) 0.9. The new key's answer to q9 is the wrong choice every prediction with c < 10
makes there, so each public accuracy gains 0.1 after it: ada-7 0.8, ada-6 0.7, bo-5 0.6."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.browser.conftest import ClockedServer
from tests.browser.test_challenge_page import _cells, _sign_in, _upload
from tests.browser.test_csp import RECORD
from tests.factories import ADMIN, film_key_items, film_predictions

pytestmark = pytest.mark.slow
BASE = (datetime.now(UTC) + timedelta(days=2)).replace(hour=12, minute=0, second=0, microsecond=0)
"""Noon two days ahead: the sprint runs 11:00-13:00, the final 14:00-15:00."""


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD)
    yield context.new_page()
    context.close()


def _board(page, phase_id: str, split: str) -> list[tuple[str, ...]]:
    """The rows of a phase's board on the page: rank, model, accuracy, n, answer-key version, participant."""
    rows = _cells(page, f".phase-board[data-phase='{phase_id}'] .phase-split[data-split='{split}']")
    return [(r[0], r[1], r[2], r[4], r[5], r[7]) for r in rows]


def _state(page, phase_id: str) -> str:
    return page.locator(f".phase-board[data-phase='{phase_id}'] .phase-board-state").text_content()


def _main_board(page) -> list[tuple[str, str, str]]:
    return [(r[0], r[1], r[2]) for r in _cells(page, "#leaderboard")]


def _at(server: ClockedServer, page, t: datetime) -> None:
    """Move the server's clock and the browser's to ``t``."""
    server.clock.now = t
    page.clock.set_fixed_time(t)


def _switch(page, key: str) -> None:
    if page.locator("#key-forget").is_visible():
        page.click("#key-forget")
        page.wait_for_selector("#challenge-signin:not([hidden])")
    _sign_in(page, key)


def _submit(page, model: str, items: list[dict]) -> None:
    page.fill("#submit-model", model)
    _upload(page, items)


def test_a_challenge_with_two_phases_run_to_their_ends_on_the_page(clocked_server: ClockedServer, page) -> None:
    url = clocked_server.url
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    _at(clocked_server, page, BASE)
    made = httpx.post(f"{url}/v1/api-keys", json={"name": "olivia", "scopes": ["benchmarks:write"]}, headers=ADMIN)
    owner = made.json()["key"]
    as_owner = {"Authorization": f"Bearer {owner}"}
    bench = httpx.post(
        f"{url}/v1/benchmarks",
        json={"name": "films-cup", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
        headers=as_owner,
    ).json()
    bid = bench["id"]
    times = {"sprint": (BASE - timedelta(hours=1), BASE + timedelta(hours=1))}
    times["final"] = (BASE + timedelta(hours=2), BASE + timedelta(hours=3))
    settings = {
        "sprint": {"splits": ["public"], "leaderboard_visibility": "public", "late_submissions": "refuse"},
        "final": {
            "splits": ["public", "private"],
            "leaderboard_visibility": "hidden_until_end",
            "late_submissions": "accept",
        },
    }
    ids = {}
    for name, (starts, ends) in times.items():
        body = {"name": name, "starts_at": _iso(starts), "ends_at": _iso(ends), **settings[name]}
        r = httpx.post(f"{url}/v1/benchmarks/{bid}/phases", json=body, headers=as_owner)
        assert r.status_code == 201, r.text
        ids[name] = r.json()["id"]
    sprint, final = ids["sprint"], ids["final"]

    # the owner invites two participants on the page
    page.goto(f"{url}/benchmarks/{bid}")
    page.wait_for_selector(f".phase-board[data-phase='{sprint}'][data-state=live]")
    phases = _cells(page, "#phases")
    assert [tuple(p) for p in phases] == [
        (
            "sprint",
            _iso(times["sprint"][0]),
            _iso(times["sprint"][1]),
            "open · ends in 1 h 0 min 0 s",
            "public",
            "refused",
        ),
        (
            "final",
            _iso(times["final"][0]),
            _iso(times["final"][1]),
            "upcoming · starts in 2 h 0 min 0 s",
            "hidden until the end",
            "accepted (unranked)",
        ),
    ]
    assert page.locator(f".phase-board[data-phase='{final}']").get_attribute("data-state") == "upcoming"
    _sign_in(page, owner)
    page.wait_for_selector("#owner:not([hidden])")
    keys = {}
    for name, team in (("Ada", "Team A"), ("Bo", "")):
        page.fill("#invite-form input[name=display_name]", name)
        page.fill("#invite-form input[name=team]", team)
        page.click("#invite-form button[type=submit]")
        page.wait_for_selector(f"#invite-status:has-text('{name} is invited')")
        keys[name] = page.locator("#invited-key").text_content()
        assert keys[name].startswith("ek_")
    page.wait_for_selector("#participants tbody tr:nth-child(2) >> text=Bo")  # the list read after the invitation
    assert [(p[0], p[1]) for p in _cells(page, "#participants")] == [("Ada", "Team A"), ("Bo", "")]

    # the sprint: Ada's bad line named, then her fixed file; Bo's file; the live public board
    _switch(page, keys["Ada"])
    page.wait_for_selector("#participate:not([hidden])")
    preds = film_predictions(6, 1)["items"]
    _submit(page, "ada-6", [*preds[:3], {"item_id": "q3", "choice_idx": "three"}, *preds[4:]])
    page.wait_for_selector("#submit-errors li")
    assert page.locator("#submit-errors li").all_text_contents() == [
        "line 4: choice_idx: Input should be a valid integer"
    ]
    assert _cells(page, "#submissions") == []
    _submit(page, "ada-6", preds)
    page.wait_for_selector("#submissions tbody tr >> text=ada-6")
    page.wait_for_selector(f".phase-board[data-phase='{sprint}'] td >> text=ada-6")
    assert _board(page, sprint, "public") == [("1", "ada-6", "0.6", "10", "v1", "Team A")]
    _switch(page, keys["Bo"])
    page.wait_for_selector("#participate:not([hidden])")
    _submit(page, "bo-8", film_predictions(8, 2)["items"])
    page.wait_for_selector("#submissions tbody tr >> text=bo-8")
    page.wait_for_selector(f".phase-board[data-phase='{sprint}'] td >> text=bo-8")
    sprint_rows = [("1", "bo-8", "0.8", "10", "v1", "Bo"), ("2", "ada-6", "0.6", "10", "v1", "Team A")]
    assert _board(page, sprint, "public") == sprint_rows
    assert _state(page, sprint) == f"live: ranked on each read until the end, {_iso(times['sprint'][1])}"

    # between the phases: the sprint ends on the open page (frozen when the page reads it), a submission is refused
    between = BASE + timedelta(hours=1, minutes=30)
    _at(clocked_server, page, between)
    page.wait_for_selector(f".phase-board[data-phase='{sprint}'][data-state=frozen]")
    frozen_sprint = f"frozen at {_iso(between)} (answer key v1): the board as it was at the end, "
    assert _state(page, sprint) == frozen_sprint + _iso(times["sprint"][1])
    assert _board(page, sprint, "public") == sprint_rows
    assert [p[3] for p in _cells(page, "#phases")] == [
        f"ended · frozen at {_iso(between)}",
        "upcoming · starts in 0 h 30 min 0 s",
    ]
    _submit(page, "bo-9", film_predictions(9)["items"])
    page.wait_for_selector("#submit-status:has-text('409')")
    assert page.locator("#submit-status").text_content() == (
        f"409 Conflict: phase 'sprint' ran {_iso(times['sprint'][0])} to {_iso(times['sprint'][1])} and refuses late "
        f"submissions; the next phase 'final' runs {_iso(times['final'][0])} to {_iso(times['final'][1])}"
    )
    assert [r[1] for r in _cells(page, "#submissions")] == ["bo-8"]

    # the final, hidden until its end: the participants submit; only the owner sees its board
    _at(clocked_server, page, BASE + timedelta(hours=2, minutes=30))
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=hidden]")
    _submit(page, "bo-5", film_predictions(5, 4)["items"])
    page.wait_for_selector("#submissions tbody tr >> text=bo-5")
    _switch(page, keys["Ada"])
    page.wait_for_selector("#participate:not([hidden])")
    _submit(page, "ada-7", film_predictions(7, 3)["items"])
    page.wait_for_selector("#submissions tbody tr >> text=ada-7")
    assert page.locator(f".phase-board[data-phase='{final}'] table").count() == 0
    assert _state(page, final).startswith(f"hidden until its end, {_iso(times['final'][1])}")
    _switch(page, owner)
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=live] td >> text=ada-7")
    final_public = [("1", "ada-7", "0.7", "10", "v1", "Team A"), ("2", "bo-5", "0.5", "10", "v1", "Bo")]
    final_private = [("1", "bo-5", "1", "4", "v1", "Bo"), ("2", "ada-7", "0.75", "4", "v1", "Team A")]
    assert (_board(page, final, "public"), _board(page, final, "private")) == (final_public, final_private)
    assert _state(page, final).endswith("hidden from all but the owners until then")
    page.click("#key-forget")
    page.reload()
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=hidden]")
    assert page.locator(f".phase-board[data-phase='{final}'] table").count() == 0
    assert "ada-7" not in page.content() and "bo-5" not in page.content()
    assert _main_board(page) == [("1", "bo-8", "0.8"), ("2", "ada-6", "0.6")]

    # the final ends on the anonymous page: its frozen board, the private split revealed
    ended = BASE + timedelta(hours=3, minutes=30)
    _at(clocked_server, page, ended)
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=frozen]")
    frozen_final = f"frozen at {_iso(ended)} (answer key v1): the board as it was at the end, {_iso(times['final'][1])}"
    assert _state(page, final) == frozen_final
    assert (_board(page, final, "public"), _board(page, final, "private")) == (final_public, final_private)
    page.reload()
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=frozen]")
    after_final = [("1", "bo-8", "0.8"), ("2", "ada-7", "0.7"), ("3", "ada-6", "0.6"), ("4", "bo-5", "0.5")]
    assert _main_board(page) == after_final

    # a late submission to the final: stored, flagged, on no board
    _sign_in(page, keys["Ada"])
    page.wait_for_selector("#participate:not([hidden])")
    _submit(page, "ada-9", film_predictions(9, 4)["items"])
    page.wait_for_selector("#submissions tbody tr >> text=ada-9")
    assert page.locator("#submit-status").text_content() == (
        "submitted ada-9 (late: stored, never ranked): public accuracy 0.9"
    )
    late = [r for r in _cells(page, "#submissions") if r[1] == "ada-9"]
    assert [(r[3], r[5]) for r in late] == [("0.9", "late (unranked)")]
    assert (_board(page, final, "public"), _board(page, final, "private")) == (final_public, final_private)

    # a withdrawal and a new answer key's re-scoring after the ends: the benchmark's board follows, the frozen ones stay
    bo8 = httpx.get(f"{url}/v1/benchmarks/{bid}/submissions", headers=as_owner).json()["items"]
    bo8_id = next(s["id"] for s in bo8 if s["model"] == "bo-8")
    assert httpx.delete(f"{url}/v1/submissions/{bo8_id}", headers=as_owner).status_code == 200
    key = film_key_items()
    key[9]["answer_idx"] = 2
    put = httpx.put(f"{url}/v1/benchmarks/{bid}/answer-key", json={"items": key}, headers=as_owner)
    assert put.status_code == 201, put.text
    page.click("#key-forget")
    page.reload()
    page.wait_for_selector(f".phase-board[data-phase='{final}'][data-state=frozen]")
    assert _main_board(page) == [("1", "ada-7", "0.8"), ("2", "ada-6", "0.7"), ("3", "bo-5", "0.6")]
    assert _state(page, sprint) == frozen_sprint + _iso(times["sprint"][1])
    assert _board(page, sprint, "public") == sprint_rows
    assert _state(page, final) == frozen_final
    assert (_board(page, final, "public"), _board(page, final, "private")) == (final_public, final_private)

    assert page.evaluate("window.__violations") == []
    assert not [u for u in urls if any(k in u for k in (owner, *keys.values()))]
