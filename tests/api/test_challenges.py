"""A benchmark run as a challenge (docs/challenges.md): owners and co-owners, participants' keys (bound, revoked,
rotated), baselines listed without a rank, ``public: false`` submissions, and the audit log."""

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from client import Client
from client.cli import main
from tests.factories import (
    ADMIN,
    api_key,
    benchmark,
    film_key_items,
    film_predictions,
    post_submission,
    submission,
)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _key_id(client: TestClient, headers: dict[str, str]) -> str:
    r = client.get("/v1/api-keys/self", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["id"]


def _invite(client: TestClient, bench_id: str, owner: dict[str, str], name: str, team: str | None = None) -> dict:
    body = {"display_name": name} | ({"team": team} if team else {})
    r = client.post(f"/v1/benchmarks/{bench_id}/participants", json=body, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()


def _board(client: TestClient, bench_id: str, headers: dict[str, str] | None = None, **params: Any) -> list[tuple]:
    """Every page of a leaderboard (one row a page, through the cursors): (rank, model, baseline, submission id)."""
    rows: list[tuple] = []
    cursor = None
    while True:
        query = {"limit": 1, **params} | ({"cursor": cursor} if cursor else {})
        r = client.get(f"/v1/benchmarks/{bench_id}/leaderboard", params=query, headers=headers or {})
        assert r.status_code == 200, r.text
        body = r.json()
        rows += [(x["rank"], x["model"], x["baseline"], x["submission_id"]) for x in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return rows


@pytest.fixture
def owner(client: TestClient) -> dict[str, str]:
    return api_key(client, "benchmarks:write", "submissions:write", name="olivia")


@pytest.fixture
def bench(client: TestClient, owner: dict[str, str]) -> dict:
    return benchmark(client, owner, name="challenge", max_submissions_per_day=2)


def test_a_rotated_key_keeps_its_id_and_binding_and_the_old_secret_is_refused_at_once(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    invited = _invite(client, bench["id"], owner, "pat")
    old = _bearer(invited["key"])
    made = submission(client, bench, old, "m", 5)
    before = client.get("/v1/api-keys/self", headers=old).json()
    r = client.post("/v1/api-keys/self/rotate", headers=old)
    assert r.status_code == 200, r.text
    rotated = r.json()
    assert rotated["key"] != invited["key"] and rotated["id"] == before["id"] == invited["key_id"]
    assert rotated["prefix"] != before["prefix"] and rotated["key"].startswith(f"ek_{rotated['prefix']}_")
    assert (rotated["scopes"], rotated["benchmark_id"]) == (["submissions:write"], bench["id"])
    assert client.get("/v1/api-keys/self", headers=old).status_code == 401
    assert client.post("/v1/api-keys/self/rotate", headers=old).status_code == 401
    new = _bearer(rotated["key"])
    assert client.get(f"/v1/submissions/{made['id']}", headers=new).json()["participant"] == "pat"
    listed = client.get("/v1/api-keys", headers=ADMIN).json()["items"]
    assert [k["prefix"] for k in listed if k["id"] == rotated["id"]] == [rotated["prefix"]]
    assert client.post("/v1/api-keys/self/rotate").status_code == 401


def test_a_revoked_participant_loses_its_key_and_keeps_its_rows(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    invited = _invite(client, bench["id"], owner, "pat", team="Red")
    pat = _bearer(invited["key"])
    made = submission(client, bench, pat, "red-1", 7)
    for body, field in (
        ({"display_name": "a\nb"}, "display_name"),
        ({"display_name": "x" * 101}, "display_name"),
        ({"display_name": "x", "team": ""}, "team"),
        ({"display_name": "x", "key": "k"}, "key"),
    ):
        r = client.post(f"/v1/benchmarks/{bench['id']}/participants", json=body, headers=owner)
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", field], (body, r.text)
    url = f"/v1/benchmarks/{bench['id']}/participants/{invited['id']}"
    first = client.delete(url, headers=owner)
    assert first.status_code == 200 and first.json()["revoked_at"] is not None
    assert client.get("/v1/api-keys/self", headers=pat).status_code == 401
    assert post_submission(client, bench, pat, "red-2", 8).status_code == 401
    again = client.delete(url, headers=owner).json()
    assert again["revoked_at"] == first.json()["revoked_at"]
    listed = client.get(f"/v1/benchmarks/{bench['id']}/participants", headers=owner).json()["items"]
    assert [(p["id"], p["revoked_at"]) for p in listed] == [(invited["id"], first.json()["revoked_at"])]
    board = client.get(f"/v1/benchmarks/{bench['id']}/leaderboard").json()["items"]
    assert [(r["submission_id"], r["participant"]) for r in board] == [(made["id"], "Red")]
    actions = [e["action"] for e in client.get(f"/v1/benchmarks/{bench['id']}/audit", headers=owner).json()["items"]]
    assert actions.count("participant.revoked") == 1


@pytest.mark.slow
def test_a_baseline_is_listed_in_order_without_a_rank_and_takes_none(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    """Public accuracies a 0.9, bm25 0.8 (the owners' baseline), c 0.7, d 0.6 (private 4/4, 3/4, 2/4, 1/4): ranks
    1, 2, 3, 4 before; 1, none, 2, 3 with bm25 a baseline, on every page, on the private split and the latest board;
    1-4 again when unmarked."""
    pat = _bearer(_invite(client, bench["id"], owner, "pat")["key"])
    quinn = _bearer(_invite(client, bench["id"], owner, "quinn")["key"])
    ids = {}
    for model, correct, private, who in (("a", 9, 4, pat), ("bm25", 8, 3, owner), ("c", 7, 2, pat), ("d", 6, 1, quinn)):
        ids[model] = submission(client, bench, who, model, correct, private)["id"]
    order = ["a", "bm25", "c", "d"]
    assert _board(client, bench["id"]) == [(i + 1, m, False, ids[m]) for i, m in enumerate(order)]
    assert client.patch(f"/v1/submissions/{ids['bm25']}", json={"baseline": True}, headers=pat).status_code == 404
    r = client.patch(f"/v1/submissions/{ids['bm25']}", json={"baseline": True}, headers=owner)
    assert r.status_code == 200 and r.json()["baseline"] is True
    marked = [(1, "a", False, ids["a"]), (None, "bm25", True, ids["bm25"]), (2, "c", False, ids["c"])]
    marked.append((3, "d", False, ids["d"]))
    assert _board(client, bench["id"]) == marked
    assert _board(client, bench["id"], owner, split="private") == marked
    assert _board(client, bench["id"], rank_by="latest") == marked
    csv = client.get(f"/v1/benchmarks/{bench['id']}/leaderboard.csv").text.splitlines()
    assert [line.split(",")[:2] for line in csv[1:]] == [["1", "a"], ["", "bm25"], ["2", "c"], ["3", "d"]]
    client.patch(f"/v1/submissions/{ids['bm25']}", json={"baseline": False}, headers=owner)
    assert _board(client, bench["id"]) == [(i + 1, m, False, ids[m]) for i, m in enumerate(order)]


def test_public_false_takes_a_submission_off_the_board_and_still_counts(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    pat = _bearer(_invite(client, bench["id"], owner, "pat")["key"])
    quinn = _bearer(_invite(client, bench["id"], owner, "quinn")["key"])
    worse = submission(client, bench, pat, "red", 7)
    better = submission(client, bench, pat, "red", 9)
    q = submission(client, bench, quinn, "blue", 8)
    assert _board(client, bench["id"]) == [(1, "red", False, better["id"]), (2, "blue", False, q["id"])]
    url = f"/v1/submissions/{better['id']}"
    assert client.patch(url, json={"public": False}, headers=owner).status_code == 403
    assert client.patch(url, json={"public": False}, headers=quinn).status_code == 404
    r = client.patch(url, json={"public": False}, headers=pat)
    assert r.status_code == 200 and r.json()["public"] is False
    assert _board(client, bench["id"]) == [(1, "blue", False, q["id"]), (2, "red", False, worse["id"])]
    assert client.get(url, headers=owner).json()["public"] is False
    assert client.get(url, headers=quinn).status_code == 404
    mine = client.get(f"/v1/benchmarks/{bench['id']}/submissions", headers=pat).json()["items"]
    assert [(s["id"], s["public"]) for s in mine] == [(better["id"], False), (worse["id"], True)]
    assert post_submission(client, bench, pat, "red", 10).status_code == 429  # the quota of 2 counts it
    assert client.patch(url, json={"public": True}, headers=pat).json()["public"] is True
    assert _board(client, bench["id"]) == [(1, "red", False, better["id"]), (2, "blue", False, q["id"])]
    for body in ({}, {"public": "false"}, {"public": None, "baseline": None}, {"hidden": True}):
        r = client.patch(url, json=body, headers=pat)
        assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json", body


def test_owners_are_managed_by_the_creator_and_see_everything(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    cora = api_key(client, "estimators:run", name="cora")
    cora_id = _key_id(client, cora)
    owners_url = f"/v1/benchmarks/{bench['id']}/owners"
    private = f"/v1/benchmarks/{bench['id']}/leaderboard?split=private"
    assert client.get(private, headers=cora).status_code == 403
    r = client.post(owners_url, json={"key_id": cora_id}, headers=owner)
    assert r.status_code == 201 and r.json()["key_id"] == cora_id and r.json()["creator"] is False
    assert client.get(private, headers=cora).status_code == 200
    invited = client.post(f"/v1/benchmarks/{bench['id']}/participants", json={"display_name": "p"}, headers=cora)
    assert invited.status_code == 201
    dave = api_key(client, "estimators:run", name="dave")
    assert client.post(owners_url, json={"key_id": _key_id(client, dave)}, headers=cora).status_code == 403
    participant_key = invited.json()["key_id"]
    for key_id in (participant_key, "no-such-key"):
        r = client.post(owners_url, json={"key_id": key_id}, headers=owner)
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "key_id"], r.text
    assert client.post(owners_url, json={"key_id": cora_id}, headers=owner).status_code == 409
    assert client.delete(f"{owners_url}/{_key_id(client, dave)}", headers=owner).status_code == 404
    assert client.delete(f"{owners_url}/{cora_id}", headers=owner).status_code == 204
    assert client.get(private, headers=cora).status_code == 403
    assert client.post(owners_url, json={"key_id": cora_id}, headers=ADMIN).status_code == 201
    names = [(o["name"], o["creator"]) for o in client.get(owners_url, headers=cora).json()["items"]]
    assert names == [("olivia", True), ("cora", False)]


def test_the_audit_log_names_each_action_its_key_and_subject_newest_first(
    client: TestClient, bench: dict, owner: dict[str, str]
) -> None:
    owner_id = _key_id(client, owner)
    admin_id = _key_id(client, ADMIN)
    cora = api_key(client, "estimators:run", name="cora")
    cora_id = _key_id(client, cora)
    base = f"/v1/benchmarks/{bench['id']}"
    client.post(f"{base}/owners", json={"key_id": cora_id}, headers=owner)
    assert client.post(f"{base}/owners", json={"key_id": cora_id}, headers=owner).status_code == 409  # no entry
    invited = _invite(client, bench["id"], owner, "pat", team="Red")
    pat = _bearer(invited["key"])
    made = submission(client, bench, pat, "red", 7)
    client.patch(f"/v1/submissions/{made['id']}", json={"public": False}, headers=pat)
    client.patch(f"/v1/submissions/{made['id']}", json={"public": False}, headers=pat)  # unchanged: no entry
    client.patch(f"/v1/submissions/{made['id']}", json={"baseline": True}, headers=cora)
    assert client.put(f"{base}/answer-key", json={"items": film_key_items(6)}, headers=owner).status_code == 201
    assert client.post(f"{base}/rescore", headers=ADMIN).status_code == 200
    client.delete(f"/v1/submissions/{made['id']}", headers=owner)
    client.delete(f"{base}/participants/{invited['id']}", headers=owner)
    client.delete(f"{base}/owners/{cora_id}", headers=ADMIN)
    expected = [
        ("owner.removed", admin_id, cora_id, {}),
        ("participant.revoked", owner_id, invited["id"], {"key_id": invited["key_id"]}),
        ("submission.withdrawn", owner_id, made["id"], {"model": "red"}),
        ("rescore", admin_id, "2", {}),
        ("answer_key.put", owner_id, "2", {"n_public": 6, "n_private": 4}),
        ("submission.baseline", cora_id, made["id"], {"baseline": True}),
        ("submission.public", invited["key_id"], made["id"], {"public": False}),
        ("participant.invited", owner_id, invited["id"], {"display_name": "pat", "team": "Red"}),
        ("owner.added", owner_id, cora_id, {"name": "cora"}),
        ("benchmark.created", owner_id, "1", {"name": "challenge"}),
    ]
    seen: list[dict] = []
    cursor = None
    while True:
        r = client.get(f"{base}/audit", params={"limit": 4} | ({"cursor": cursor} if cursor else {}), headers=owner)
        assert r.status_code == 200, r.text
        seen += r.json()["items"]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            break
    got = [(e["action"], e["actor_key_id"], e["subject"], e["details"]) for e in seen]
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    for (_, _, _, details), (*_, wanted) in zip(got, expected, strict=True):
        assert details.items() >= wanted.items()
    assert got[4][3]["rescore"] in ("job", "inline") and len(got[4][3]["sha256"]) == 64
    assert [e["seq"] for e in seen] == sorted((e["seq"] for e in seen), reverse=True)
    assert all(e["at"].endswith("Z") for e in seen)
    assert client.get(f"{base}/audit", params={"cursor": "!"}, headers=owner).status_code == 422


@pytest.mark.slow
def test_the_cli_runs_a_challenge(client: TestClient, bench: dict, owner: dict[str, str], capsys: Any) -> None:
    """participant-invite, participant-list, submission-patch, audit, owner-*, key-show, key-rotate and
    participant-revoke through the client over the app."""
    as_owner = Client(http=client)
    as_owner.headers = dict(owner)

    def run(c: Client, *argv: str) -> Any:
        assert main(list(argv), client=c) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    invited = run(as_owner, "participant-invite", bench["id"], "Ada", "--team", "Team A")
    assert (invited["display_name"], invited["team"], invited["key"].startswith("ek_")) == ("Ada", "Team A", True)
    assert [p["id"] for p in run(as_owner, "participant-list", bench["id"])] == [invited["id"]]
    ada = Client(http=client, api_key=invited["key"])
    assert run(ada, "key-show")["benchmark_id"] == bench["id"]
    made = ada.submit(bench["id"], "m", film_predictions(6)["items"])
    assert made["participant"] == "Team A"
    assert run(ada, "submission-patch", made["id"], "--public", "false")["public"] is False
    assert run(as_owner, "submission-patch", made["id"], "--baseline", "true")["baseline"] is True
    assert main(["submission-patch", made["id"]], client=ada) == 2
    assert "give --baseline and/or --public" in capsys.readouterr().err
    assert main(["submission-patch", made["id"], "--baseline", "true"], client=ada) == 1
    assert capsys.readouterr().err.startswith("estibench: 403 ")
    rotated = run(ada, "key-rotate")
    assert rotated["id"] == invited["key_id"] and run(ada, "key-show")["prefix"] == rotated["prefix"]
    cora = api_key(client, "estimators:run", name="cora")
    cora_id = _key_id(client, cora)
    assert run(as_owner, "owner-add", bench["id"], cora_id)["key_id"] == cora_id
    assert [o["name"] for o in run(as_owner, "owner-list", bench["id"])] == ["olivia", "cora"]
    assert run(as_owner, "owner-remove", bench["id"], cora_id) == {"removed": cora_id}
    assert run(as_owner, "participant-revoke", bench["id"], invited["id"])["revoked_at"] is not None
    actions = [e["action"] for e in run(as_owner, "audit", bench["id"], "--limit", "3")]
    assert actions == ["participant.revoked", "owner.removed", "owner.added"]
