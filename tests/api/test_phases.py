"""Challenge phases over HTTP (docs/challenges.md, phases): settings and their checks, which phase a submission goes
to, the phases' limits (exact under concurrency), live, hidden and frozen boards, freezing exactly once, late
submissions. Time is the app's clock (``Services.clock``), set by each test."""

import json
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from client import Client
from client.cli import main
from db.repositories import phases as phase_repo
from tests.api.test_access_and_quotas import concurrently
from tests.factories import ADMIN, api_key, benchmark, film_key_items, post_submission, submission
from usecases import phases
from usecases.services import Services
from usecases.settings import Settings

BASE = (datetime.now(UTC) + timedelta(days=2)).replace(hour=12, minute=0, second=0, microsecond=0)
"""Noon two days ahead: every phase of these tests lies within that UTC day."""


class Clock:
    """The app's clock, set by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture
def clock(client: TestClient) -> Clock:
    c = Clock(BASE - timedelta(hours=2))
    client.app.state.services.clock = c  # type: ignore[attr-defined]
    return c


@pytest.fixture
def owner(client: TestClient) -> dict[str, str]:
    return api_key(client, "benchmarks:write", "submissions:write", name="olivia")


@pytest.fixture
def bench(client: TestClient, owner: dict[str, str]) -> dict:
    return benchmark(client, owner, name="challenge", max_submissions_per_day=10)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _invite(client: TestClient, bench_id: str, owner: dict[str, str], name: str, team: str | None = None) -> dict:
    body = {"display_name": name} | ({"team": team} if team else {})
    r = client.post(f"/v1/benchmarks/{bench_id}/participants", json=body, headers=owner)
    assert r.status_code == 201, r.text
    return _bearer(r.json()["key"])


def _phase(client: TestClient, bench_id: str, owner: dict[str, str], start_h: float, end_h: float, **kw: Any) -> dict:
    body = {
        "name": kw.pop("name", f"phase {start_h:g}"),
        "starts_at": _iso(BASE + timedelta(hours=start_h)),
        "ends_at": _iso(BASE + timedelta(hours=end_h)),
        **kw,
    }
    r = client.post(f"/v1/benchmarks/{bench_id}/phases", json=body, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()


def _board(client: TestClient, bench_id: str, phase_id: str, headers: dict | None = None, **params: Any) -> Any:
    return client.get(f"/v1/benchmarks/{bench_id}/phases/{phase_id}/leaderboard", params=params, headers=headers or {})


def _rows(r: Any) -> list[tuple]:
    assert r.status_code == 200, r.text
    return [(x["rank"], x["model"], x["participant"], x["scores"]["accuracy"]["value"]) for x in r.json()["items"]]


def _actions(client: TestClient, bench_id: str, owner: dict[str, str]) -> list[str]:
    r = client.get(f"/v1/benchmarks/{bench_id}/audit", params={"limit": 100}, headers=owner)
    assert r.status_code == 200, r.text
    return [e["action"] for e in r.json()["items"]]


def test_a_challenge_walked_through_two_phases(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    bid = bench["id"]
    first = _phase(client, bid, owner, -1, 1, name="warm-up", splits=["public", "private"], max_submissions_total=2)
    final = _phase(
        client,
        bid,
        owner,
        2,
        4,
        name="final",
        splits=["public", "private"],
        max_submissions_per_day=1,
        leaderboard_visibility="hidden_until_end",
        late_submissions="accept",
    )
    listed = client.get(f"/v1/benchmarks/{bid}/phases").json()["items"]
    assert [(p["name"], p["status"], p["ends_at"]) for p in listed] == [
        ("warm-up", "upcoming", _iso(BASE + timedelta(hours=1))),
        ("final", "upcoming", _iso(BASE + timedelta(hours=4))),
    ]
    alice = _invite(client, bid, owner, "alice", team="red")
    bob = _invite(client, bid, owner, "bob")

    refused = post_submission(client, bid, alice, "alpha", 5)
    assert refused.status_code == 409
    assert "warm-up" in refused.json()["detail"] and _iso(BASE - timedelta(hours=1)) in refused.json()["detail"]

    clock.now = BASE
    made = submission(client, bid, alice, "alpha", 5, 1)
    assert (made["phase_id"], made["late"]) == (first["id"], False)
    best = submission(client, bid, alice, "alpha", 8, 3)
    submission(client, bid, bob, "beta", 6, 4)
    over = post_submission(client, bid, alice, "alpha", 9)
    assert over.status_code == 429 and "2 submissions allowed in phase 'warm-up'" in over.json()["detail"]
    live = _board(client, bid, first["id"])
    assert live.json()["frozen_at"] is None
    assert _rows(live) == [(1, "alpha", "red", 0.8), (2, "beta", "bob", 0.6)]
    private = [(1, "beta", "bob", 1.0), (2, "alpha", "red", 0.75)]
    assert _rows(_board(client, bid, first["id"], split="private")) == private

    clock.now = BASE + timedelta(hours=1, minutes=30)
    between = post_submission(client, bid, bob, "beta", 7)
    assert between.status_code == 409
    detail = between.json()["detail"]
    assert "refuses late submissions" in detail and _iso(BASE + timedelta(hours=1)) in detail and "final" in detail
    frozen = _board(client, bid, first["id"])
    assert frozen.json()["frozen_at"] == _iso(clock.now) and frozen.json()["answer_key_version"] == 1
    assert _rows(frozen) == [(1, "alpha", "red", 0.8), (2, "beta", "bob", 0.6)]

    # later withdrawal and re-scoring against a new answer key change the live boards, never the frozen one
    assert client.delete(f"/v1/submissions/{best['id']}", headers=owner).status_code == 200
    base_url = f"/v1/benchmarks/{bid}"
    key = film_key_items()
    key[9]["answer_idx"] = 2  # the wrong choice every prediction below makes on q9 is now right
    assert client.put(f"{base_url}/answer-key", json={"items": key}, headers=owner).status_code == 201
    assert client.post(f"{base_url}/rescore", headers=ADMIN).status_code == 200
    main_board = client.get(f"{base_url}/leaderboard").json()["items"]
    assert [(x["model"], x["scores"]["accuracy"]["value"]) for x in main_board] == [("beta", 0.7), ("alpha", 0.6)]
    again = _board(client, bid, first["id"])
    assert again.json() == frozen.json()
    assert _actions(client, bid, owner).count("phase.frozen") == 1

    clock.now = BASE + timedelta(hours=3)
    assert submission(client, bid, alice, "alpha", 4, 2)["phase_id"] == final["id"]
    submission(client, bid, bob, "beta", 3, 3)
    daily = post_submission(client, bid, alice, "alpha", 5)
    assert daily.status_code == 429 and "1 submissions a day of phase 'final'" in daily.json()["detail"]
    for who in ({}, bob, alice):
        hidden = _board(client, bid, final["id"], who)
        assert hidden.status_code == 403 and "hidden until its end" in hidden.json()["detail"]
    hidden_private = [(1, "beta", "bob", 0.75), (2, "alpha", "red", 0.5)]
    assert _rows(_board(client, bid, final["id"], owner, split="private")) == hidden_private

    clock.now = BASE + timedelta(hours=5)
    late = submission(client, bid, bob, "gamma", 5)
    assert (late["phase_id"], late["late"]) == (final["id"], True)
    revealed = _board(client, bid, final["id"], split="private")
    assert revealed.json()["frozen_at"] == _iso(clock.now)
    assert _rows(revealed) == hidden_private
    assert _rows(_board(client, bid, final["id"])) == [(1, "alpha", "red", 0.5), (2, "beta", "bob", 0.4)]
    assert "gamma" not in {x["model"] for x in client.get(f"{base_url}/leaderboard").json()["items"]}
    actions = _actions(client, bid, owner)
    assert Counter(a for a in actions if a.startswith("phase.")) == Counter({"phase.created": 2, "phase.frozen": 2})


def test_phase_settings_are_checked_and_a_refused_change_stores_nothing(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    bid = bench["id"]
    url = f"/v1/benchmarks/{bid}/phases"
    kept = _phase(client, bid, owner, 0, 2, name="kept")
    good = {"name": "p", "starts_at": _iso(BASE + timedelta(hours=3)), "ends_at": _iso(BASE + timedelta(hours=4))}
    cases = [
        ({"ends_at": _iso(BASE + timedelta(hours=3))}, ["body", "ends_at"]),
        ({"starts_at": _iso(BASE + timedelta(hours=1))}, ["body", "starts_at"]),
        (
            {"starts_at": _iso(BASE - timedelta(hours=1)), "ends_at": _iso(BASE + timedelta(hours=1))},
            ["body", "ends_at"],
        ),
        ({"starts_at": "2026-12-05T12:00:00"}, ["body", "starts_at"]),
        ({"ends_at": "3100-01-01T00:00:00Z"}, ["body", "ends_at"]),
        ({"splits": ["public", "public"]}, ["body", "splits"]),
        ({"splits": []}, ["body", "splits"]),
        ({"max_submissions_total": 0}, ["body", "max_submissions_total"]),
        ({"max_submissions_per_day": True}, ["body", "max_submissions_per_day"]),
        ({"leaderboard_visibility": "secret"}, ["body", "leaderboard_visibility"]),
        ({"late_submissions": "maybe"}, ["body", "late_submissions"]),
        ({"name": "a\x00b"}, ["body", "name"]),
        ({"colour": "red"}, ["body", "colour"]),
    ]
    for change, loc in cases:
        r = client.post(url, json=good | change, headers=owner)
        assert r.status_code == 422, (change, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert loc in [e["loc"][:2] for e in r.json()["errors"]], (change, r.json())
    overlap = client.post(url, json=good | {"starts_at": _iso(BASE + timedelta(hours=1))}, headers=owner)
    assert "overlaps phase 'kept'" in overlap.json()["detail"]
    participant = _invite(client, bid, owner, "pat")
    assert client.post(url, json=good, headers=participant).status_code == 403
    assert client.post(url, json=good).status_code == 401
    assert [p["id"] for p in client.get(url).json()["items"]] == [kept["id"]]

    one = f"{url}/{kept['id']}"
    assert client.patch(one, json={"name": None}, headers=owner).json()["errors"][0]["loc"] == ["body", "name"]
    assert client.patch(one, json={}, headers=owner).status_code == 422
    r = client.patch(one, json={"ends_at": _iso(BASE + timedelta(hours=5)), "max_submissions_total": 4}, headers=owner)
    assert r.status_code == 200 and (r.json()["ends_at"], r.json()["max_submissions_total"]) == (
        _iso(BASE + timedelta(hours=5)),
        4,
    )
    assert (
        client.patch(one, json={"max_submissions_total": None}, headers=owner).json()["max_submissions_total"] is None
    )
    clock.now = BASE + timedelta(minutes=1)
    started = client.patch(one, json={"starts_at": _iso(BASE + timedelta(minutes=30))}, headers=owner)
    assert started.status_code == 409 and "starts_at cannot change" in started.json()["detail"]
    submission(client, bid, participant, "m", 5)
    assert client.delete(one, headers=owner).status_code == 409
    later = _phase(client, bid, owner, 6, 7, name="later")
    assert client.delete(f"{url}/{later['id']}", headers=participant).status_code == 403
    assert client.delete(f"{url}/{later['id']}", headers=owner).status_code == 204
    assert client.get(f"{url}/{later['id']}").status_code == 404
    clock.now = BASE + timedelta(hours=6)
    ended = client.patch(one, json={"name": "renamed"}, headers=owner)
    assert ended.status_code == 409 and "frozen" in ended.json()["detail"]
    actions = [a for a in _actions(client, bid, owner) if a.startswith("phase.")]
    assert Counter(actions) == Counter({"phase.created": 2, "phase.changed": 2, "phase.deleted": 1})


def test_a_benchmark_without_phases_takes_submissions_as_before(client: TestClient, clock: Clock, bench: dict) -> None:
    alice = api_key(client, "submissions:write", name="alice")
    made = submission(client, bench, alice, "m", 5)
    assert (made["phase_id"], made["late"]) == (None, False)


@pytest.mark.slow
def test_a_phase_total_limit_is_exact_under_concurrency_and_counts_the_whole_team(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    bid = bench["id"]
    _phase(client, bid, owner, -1, 1, max_submissions_total=3, max_submissions_per_day=5)
    clock.now = BASE
    red = [_invite(client, bid, owner, f"red{i}", team="red") for i in range(2)]
    solo = _invite(client, bid, owner, "solo")
    statuses = concurrently(12, lambda i: post_submission(client, bid, red[i % 2], f"m{i}").status_code)
    assert statuses == Counter({201: 3, 429: 9})
    mine = [s for h in red for s in client.get(f"/v1/benchmarks/{bid}/submissions", headers=h).json()["items"]]
    assert len(mine) == 3
    assert [post_submission(client, bid, solo, "s").status_code for _ in range(4)] == [201, 201, 201, 429]


def _race_freeze(settings: Settings, phase_id: str, now: datetime) -> list[Any]:
    """Two services (own engines, as two API processes have) freezing one phase at the same moment."""
    services = [Services(settings), Services(settings)]
    barrier = threading.Barrier(2)
    out: list[Any] = [None, None]

    def run(i: int) -> None:
        services[i].clock = lambda: now
        with services[i].engines.read.connect() as conn:
            phase = phase_repo.get(conn, phase_id)
        barrier.wait()
        out[i] = phases.freeze(services[i], phase)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in services:
        s.dispose()
    return out


def test_a_phase_freezes_exactly_once_when_two_processes_race(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict, settings: Settings
) -> None:
    bid = bench["id"]
    phase = _phase(client, bid, owner, -1, 1)
    clock.now = BASE
    submission(client, bid, _invite(client, bid, owner, "pat"), "m", 7)
    first, second = _race_freeze(settings, phase["id"], BASE + timedelta(hours=2))
    assert first == second and first.frozen_at == BASE + timedelta(hours=2)
    assert _actions(client, bid, owner).count("phase.frozen") == 1
    clock.now = BASE + timedelta(hours=3)
    board = _board(client, bid, phase["id"]).json()
    assert board["frozen_at"] == _iso(BASE + timedelta(hours=2)) and _rows_of(board) == [(1, "m", "pat", 0.7)]


def _rows_of(body: dict) -> list[tuple]:
    return [(x["rank"], x["model"], x["participant"], x["scores"]["accuracy"]["value"]) for x in body["items"]]


def test_a_second_snapshot_insert_is_ignored(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    phase = _phase(client, bench["id"], owner, -1, 1)
    services = client.app.state.services  # type: ignore[attr-defined]
    rows = [phase_repo.SnapshotRow(phase["id"], BASE + timedelta(hours=h), h) for h in (2, 3)]
    with services.engines.write.begin() as conn:
        assert [phase_repo.insert_snapshot(conn, r) for r in rows] == [True, False]
        assert phase_repo.snapshot(conn, phase["id"]) == rows[0]


def test_the_reaper_pass_freezes_an_ended_phase_nobody_read(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    phase = _phase(client, bench["id"], owner, -1, 1)
    services = client.app.state.services  # type: ignore[attr-defined]
    clock.now = BASE + timedelta(hours=1)
    for work in services.jobs.passes:
        work()
    with services.engines.read.connect() as conn:
        snap = phase_repo.snapshot(conn, phase["id"])
    assert snap is not None and snap.frozen_at == BASE + timedelta(hours=1)
    assert _actions(client, bench["id"], owner).count("phase.frozen") == 1


@pytest.mark.slow
def test_the_cli_runs_the_phases(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict, capsys: Any
) -> None:
    """phase-create, phase-list, phase-show, phase-update, phase-leaderboard and phase-delete over the app."""
    as_owner = Client(http=client)
    as_owner.headers = dict(owner)
    bid = bench["id"]

    def run(*argv: str) -> Any:
        assert main(list(argv), client=as_owner) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    start, end = _iso(BASE - timedelta(hours=1)), _iso(BASE + timedelta(hours=1))
    made = run("phase-create", bid, "sprint", start, end, "--splits", "public,private", "--max-total", "2")
    assert (made["name"], made["splits"], made["max_submissions_total"], made["late_submissions"]) == (
        "sprint",
        ["public", "private"],
        2,
        "refuse",
    )
    assert [p["id"] for p in run("phase-list", bid)] == [made["id"]]
    changed = run("phase-update", bid, made["id"], "--max-per-day", "1", "--visibility", "hidden_until_end")
    assert (changed["max_submissions_per_day"], changed["leaderboard_visibility"]) == (1, "hidden_until_end")
    assert run("phase-show", bid, made["id"]) == changed
    assert main(["phase-update", bid, made["id"]], client=as_owner) == 2
    assert "give at least one setting" in capsys.readouterr().err
    clock.now = BASE
    submission(client, bid, owner, "m", 6)
    board = run("phase-leaderboard", bid, made["id"], "--split", "private")
    assert (board["frozen_at"], [(r["rank"], r["model"]) for r in board["items"]]) == (None, [(1, "m")])
    spare = run("phase-create", bid, "spare", _iso(BASE + timedelta(hours=2)), _iso(BASE + timedelta(hours=3)))
    assert run("phase-delete", bid, spare["id"]) == {"deleted": spare["id"]}
    assert main(["phase-delete", bid, made["id"]], client=as_owner) == 1
    assert capsys.readouterr().err.startswith("estibench: 409 ")


def test_two_engines_inserting_one_snapshot_at_once_store_it_once(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict, settings: Settings
) -> None:
    """The second of two concurrent inserts (its own engine, as another API process has) waits for the first's
    transaction and then inserts nothing."""
    phase = _phase(client, bench["id"], owner, -1, 1)
    first, second = Services(settings), Services(settings)
    rows = [phase_repo.SnapshotRow(phase["id"], BASE + timedelta(hours=h), h) for h in (2, 3)]
    inserted: list[bool] = []
    started = threading.Event()

    def other() -> None:
        started.set()
        with second.engines.write.begin() as conn:
            inserted.append(phase_repo.insert_snapshot(conn, rows[1]))

    with first.engines.write.begin() as conn:
        assert phase_repo.insert_snapshot(conn, rows[0])
        thread = threading.Thread(target=other)
        thread.start()
        started.wait()
        time.sleep(0.3)
        assert inserted == []  # still waiting for this transaction
    thread.join()
    assert inserted == [False]
    with first.engines.read.connect() as conn:
        assert phase_repo.snapshot(conn, phase["id"]) == rows[0]
    first.dispose()
    second.dispose()


@pytest.mark.slow
def test_a_phase_per_day_limit_replaces_the_benchmark_quota_while_it_is_open(
    client: TestClient, clock: Clock, owner: dict[str, str]
) -> None:
    bid = benchmark(client, owner, name="tight", max_submissions_per_day=1)["id"]
    _phase(client, bid, owner, -1, 1, max_submissions_per_day=3, late_submissions="accept")
    pat = _invite(client, bid, owner, "pat")
    clock.now = BASE
    assert [post_submission(client, bid, pat, "m").status_code for _ in range(4)] == [201, 201, 201, 429]
    clock.now = BASE + timedelta(hours=2)
    late = post_submission(client, bid, pat, "m")
    assert late.status_code == 429 and "daily quota of 1" in late.json()["detail"]


def _overall(client: TestClient, bench_id: str, headers: dict | None = None, **params: Any) -> list[tuple]:
    r = client.get(f"/v1/benchmarks/{bench_id}/leaderboard", params=params, headers=headers or {})
    assert r.status_code == 200, r.text
    return [(x["rank"], x["model"], x["scores"]["accuracy"]["value"]) for x in r.json()["items"]]


@pytest.mark.slow
def test_a_hidden_phase_shows_nothing_of_its_board_anywhere_until_its_end(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    """Before its end a hidden phase's submissions are on no overall board (JSON, CSV, NDJSON, plot, page) and no
    one else may compare against them; a participant still lists its own. The first read after the end brings
    them onto the overall board with exact ranks, once."""
    bid = bench["id"]
    warm = _phase(client, bid, owner, -1, 1, name="warm-up")
    final = _phase(client, bid, owner, 2, 4, name="final", leaderboard_visibility="hidden_until_end")
    alice, bob = _invite(client, bid, owner, "alice"), _invite(client, bid, owner, "bob")
    clock.now = BASE
    beta = submission(client, bid, bob, "beta", 6, 2)
    assert submission(client, bid, alice, "alpha", 5, 1)["phase_id"] == warm["id"]
    clock.now = BASE + timedelta(hours=3)
    top = submission(client, bid, alice, "alpha", 9, 4)
    assert submission(client, bid, alice, "gamma", 7)["phase_id"] == final["id"]
    before = [(1, "beta", 0.6), (2, "alpha", 0.5)]
    for who in ({}, alice, bob, owner, ADMIN):
        assert _overall(client, bid, who) == before
    assert _overall(client, bid, owner, split="private") == [(1, "beta", 0.5), (2, "alpha", 0.25)]
    base_url = f"/v1/benchmarks/{bid}"
    for read in ("leaderboard.csv", "leaderboard.ndjson", "leaderboard/plot"):
        text = client.get(f"{base_url}/{read}").text
        assert "beta" in text and "alpha" in text and "gamma" not in text, read
    page = client.get(f"/benchmarks/{bid}")
    assert page.status_code == 200 and "gamma" not in page.text and "beta" in page.text
    compare = f"{base_url}/compare?a={top['id']}&b={beta['id']}"
    assert client.get(compare, headers=bob).status_code == 404
    assert client.get(compare).status_code == 404
    assert client.get(compare, headers=alice).json()["mean_a"] == 0.9
    assert client.get(compare, headers=owner).json()["mean_a"] == 0.9
    mine = client.get(f"{base_url}/submissions", headers=alice).json()["items"]
    assert sorted(s["model"] for s in mine) == ["alpha", "alpha", "gamma"]
    theirs = client.get(f"{base_url}/submissions", headers=bob).json()["items"]
    assert [s["model"] for s in theirs] == ["beta"]
    assert _rows(_board(client, bid, final["id"], owner)) == [(1, "alpha", "alice", 0.9), (2, "gamma", "alice", 0.7)]

    clock.now = BASE + timedelta(hours=4)
    after = [(1, "alpha", 0.9), (2, "gamma", 0.7), (3, "beta", 0.6)]
    assert _overall(client, bid) == after
    assert _overall(client, bid, owner, split="private") == [(1, "alpha", 1.0), (2, "beta", 0.5), (3, "gamma", 0.0)]
    second = client.get(f"{base_url}/leaderboard", params={"limit": 2}).json()
    rest = client.get(f"{base_url}/leaderboard", params={"limit": 2, "cursor": second["next_cursor"]}).json()
    assert [(x["rank"], x["model"]) for x in rest["items"]] == [(3, "beta")]
    assert client.get(compare, headers=bob).json()["mean_a"] == 0.9
    assert _overall(client, bid) == after
    assert _actions(client, bid, owner).count("phase.frozen") == 2


@pytest.mark.slow
def test_a_phase_made_hidden_or_public_while_open_leaves_or_joins_the_overall_board(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    bid = bench["id"]
    phase = _phase(client, bid, owner, -1, 1, name="open")
    alice = _invite(client, bid, owner, "alice")
    clock.now = BASE
    submission(client, bid, alice, "alpha", 5)
    submission(client, bid, alice, "alpha", 8)
    submission(client, bid, alice, "beta", 6)
    assert _overall(client, bid) == [(1, "alpha", 0.8), (2, "beta", 0.6)]
    url = f"/v1/benchmarks/{bid}/phases/{phase['id']}"
    r = client.patch(url, json={"leaderboard_visibility": "hidden_until_end"}, headers=owner)
    assert r.status_code == 200, r.text
    assert _overall(client, bid) == []
    r = client.patch(url, json={"leaderboard_visibility": "public"}, headers=owner)
    assert r.status_code == 200, r.text
    assert _overall(client, bid) == [(1, "alpha", 0.8), (2, "beta", 0.6)]


@pytest.mark.slow
def test_a_frozen_board_is_the_board_at_the_phase_end(
    client: TestClient, clock: Clock, owner: dict[str, str], bench: dict
) -> None:
    """A withdrawal and a new answer key's re-scoring after the end, before any read or reaper pass, leave the
    frozen board as it was at the end (answer-key version 1, the withdrawn submission on it); the overall board
    follows them."""
    bid = bench["id"]
    phase = _phase(client, bid, owner, -1, 1, name="only", splits=["public", "private"])
    alice, bob = _invite(client, bid, owner, "alice"), _invite(client, bid, owner, "bob")
    clock.now = BASE
    best = submission(client, bid, alice, "alpha", 8, 3)
    submission(client, bid, alice, "alpha", 5, 1)
    submission(client, bid, bob, "beta", 6, 4)
    at_end = _rows(_board(client, bid, phase["id"]))
    assert at_end == [(1, "alpha", "alice", 0.8), (2, "beta", "bob", 0.6)]

    clock.now = BASE + timedelta(hours=1, minutes=10)
    assert client.delete(f"/v1/submissions/{best['id']}", headers=alice).status_code == 200
    key = film_key_items()
    key[9]["answer_idx"] = 2  # the wrong choice every prediction makes on q9 is now right
    assert client.put(f"/v1/benchmarks/{bid}/answer-key", json={"items": key}, headers=owner).status_code == 201
    assert client.post(f"/v1/benchmarks/{bid}/rescore", headers=ADMIN).status_code == 200
    late = clock.now
    assert _overall(client, bid) == [(1, "beta", 0.7), (2, "alpha", 0.6)]  # this first read after the end froze it

    clock.now = BASE + timedelta(hours=2)
    frozen = _board(client, bid, phase["id"])
    assert frozen.json()["answer_key_version"] == 1 and frozen.json()["frozen_at"] == _iso(late)
    assert _rows(frozen) == at_end
    assert [x["pending"] for x in frozen.json()["items"]] == [False, False]
    assert _rows(_board(client, bid, phase["id"], split="private")) == [
        (1, "beta", "bob", 1.0),
        (2, "alpha", "alice", 0.75),
    ]
