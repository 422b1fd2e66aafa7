"""A benchmark's answer-key versions for its owners: the listing (newest first, paged), one version's items, and
restoring one (a new version with its items, every submission re-scored, audited as ``answer_key.restored``), from
HTTP, the Python client and the command line."""

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from client import Client
from client.cli import main
from service.errors import InvalidInput
from service.registry import SCORERS
from tests.factories import api_key, benchmark, film_key_items, serving, submission
from usecases.settings import Settings


def _second_key() -> list[dict]:
    """``film_key_items()`` with q5..q9 answering ``(i + 1) % 4`` and p0 answering 2 (version 2)."""
    items = film_key_items()
    for i in range(5, 10):
        items[i]["answer_idx"] = (i + 1) % 4
    items[10]["answer_idx"] = 2
    return items


def _sha(items: list[dict]) -> str:
    """The content hash of a key as the service computes it: canonical JSON of the items sorted by item_id."""
    text = json.dumps(sorted(items, key=lambda d: d["item_id"]), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _board(client: TestClient, bench_id: str, split: str, headers: dict[str, str]) -> tuple[int, list[tuple]]:
    r = client.get(f"/v1/benchmarks/{bench_id}/leaderboard", params={"split": split}, headers=headers)
    assert r.status_code == 200, r.text
    rows = [(x["rank"], x["model"], x["scores"]["accuracy"]["value"], x["pending"]) for x in r.json()["items"]]
    return r.json()["answer_key_version"], rows


def _audit(client: TestClient, bench_id: str, headers: dict[str, str]) -> list[dict]:
    r = client.get(f"/v1/benchmarks/{bench_id}/audit", params={"limit": 100}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def _versions(client: TestClient, bench_id: str, headers: dict[str, str]) -> list[tuple[int, str, bool]]:
    r = client.get(f"/v1/benchmarks/{bench_id}/answer-key/versions", params={"limit": 100}, headers=headers)
    assert r.status_code == 200, r.text
    return [(v["version"], v["sha256"], v["current"]) for v in r.json()["items"]]


@pytest.fixture
def owner(client: TestClient) -> dict[str, str]:
    return api_key(client, "benchmarks:write", name="olivia")


@pytest.fixture
def bench(client: TestClient, owner: dict[str, str]) -> dict:
    """Version 1 (``film_key_items()``), two submissions (a: 8/10 public, 3/4 private; b: 5/10, 1/4), version 2
    (``_second_key()``)."""
    made = benchmark(client, owner, name="restored")
    alice = api_key(client, "submissions:write", name="alice")
    submission(client, made, alice, "a", 8, 3)
    submission(client, made, alice, "b", 5, 1)
    r = client.put(f"/v1/benchmarks/{made['id']}/answer-key", json={"items": _second_key()}, headers=owner)
    assert r.status_code == 201, r.text
    return made


@pytest.mark.slow
@pytest.mark.parametrize("queue", ["off", "immediate"])
def test_restoring_version_1_brings_back_its_scores_on_both_boards(settings: Settings, queue: str) -> None:
    """Version 2: a is right on q0..q4, q8, q9 (0.7) and b on every public item (1.0); p0's answer moves to 2, so
    a keeps p1, p2 (0.5) and b none (0.0). Restoring version 1 makes version 3 with version 1's hash and the boards
    show version 1's figures again: a 0.8 / 0.75, b 0.5 / 0.25."""
    with serving(settings, queue=queue) as client:
        owner = api_key(client, "benchmarks:write", name="olivia")
        alice = api_key(client, "submissions:write", name="alice")
        bench = benchmark(client, owner, name="restored")
        base = f"/v1/benchmarks/{bench['id']}"
        submission(client, bench, alice, "a", 8, 3)
        submission(client, bench, alice, "b", 5, 1)
        v1 = {
            "public": _board(client, bench["id"], "public", owner),
            "private": _board(client, bench["id"], "private", owner),
        }
        assert v1 == {
            "public": (1, [(1, "a", 0.8, False), (2, "b", 0.5, False)]),
            "private": (1, [(1, "a", 0.75, False), (2, "b", 0.25, False)]),
        }
        assert client.put(f"{base}/answer-key", json={"items": _second_key()}, headers=owner).status_code == 201
        assert _board(client, bench["id"], "public", owner) == (2, [(1, "b", 1.0, False), (2, "a", 0.7, False)])
        assert _board(client, bench["id"], "private", owner) == (2, [(1, "a", 0.5, False), (2, "b", 0.0, False)])

        r = client.post(f"{base}/answer-key/versions/1/restore", headers=owner)
        assert r.status_code == 201, r.text
        body = r.json()
        assert (body["answer_key_version"], body["created"], body["answer_key_sha256"]) == (
            3,
            True,
            bench["answer_key_sha256"],
        )
        if queue == "off":
            assert (body["rescored"], body["rescore_job_id"], "location" in r.headers) == (2, None, False)
        else:
            assert r.headers["location"] == f"/v1/jobs/{body['rescore_job_id']}" and body["rescored"] is None
            assert client.get(r.headers["location"], headers=owner).json()["status"] == "succeeded"
        assert _board(client, bench["id"], "public", owner) == (3, [(1, "a", 0.8, False), (2, "b", 0.5, False)])
        assert _board(client, bench["id"], "private", owner) == (3, [(1, "a", 0.75, False), (2, "b", 0.25, False)])
        versions = _versions(client, bench["id"], owner)
        assert [(v, current) for v, _, current in versions] == [(3, True), (2, False), (1, False)]
        assert versions[0][1] == versions[2][1] == body["answer_key_sha256"] != versions[1][1]
        entry = _audit(client, bench["id"], owner)[0]
        owner_id = client.get("/v1/api-keys/self", headers=owner).json()["id"]
        assert (entry["action"], entry["actor_key_id"], entry["subject"]) == ("answer_key.restored", owner_id, "3")
        assert entry["details"] == {
            "restored_version": 1,
            "sha256": body["answer_key_sha256"],
            "n_public": 10,
            "n_private": 4,
            "rescore": "job" if queue == "immediate" else "inline",
        }


def test_restoring_the_current_content_changes_nothing_as_a_put_of_it_does(
    client: TestClient, owner: dict[str, str], bench: dict
) -> None:
    """Version 2 is current: restoring it answers what a PUT of its items answers (200, not created); after version 3
    (version 1's content) is current, restoring version 1 is that same no-op. No version, no audit entry."""
    base = f"/v1/benchmarks/{bench['id']}"
    before = (_versions(client, bench["id"], owner), _audit(client, bench["id"], owner))
    restored = client.post(f"{base}/answer-key/versions/2/restore", headers=owner)
    put = client.put(f"{base}/answer-key", json={"items": _second_key()}, headers=owner)
    assert restored.status_code == put.status_code == 200
    assert restored.json() == put.json()
    assert (restored.json()["answer_key_version"], restored.json()["created"], restored.json()["rescored"]) == (
        2,
        False,
        0,
    )
    assert (_versions(client, bench["id"], owner), _audit(client, bench["id"], owner)) == before
    assert client.post(f"{base}/answer-key/versions/1/restore", headers=owner).status_code == 201
    again = client.post(f"{base}/answer-key/versions/1/restore", headers=owner)
    assert (again.status_code, again.json()["answer_key_version"], again.json()["created"]) == (200, 3, False)
    assert [v for v, _, _ in _versions(client, bench["id"], owner)] == [3, 2, 1]


def test_a_versions_items_are_its_owners_download(client: TestClient, owner: dict[str, str], bench: dict) -> None:
    """Both splits' items, sorted by item_id, hashing to the version's sha256, and accepted back by a PUT (which
    finds them current: nothing changes)."""
    base = f"/v1/benchmarks/{bench['id']}"
    r = client.get(f"{base}/answer-key/versions/2", headers=owner)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["benchmark_id"], body["version"], body["current"], body["n_public"], body["n_private"]) == (
        bench["id"],
        2,
        True,
        10,
        4,
    )
    ids = [i["item_id"] for i in body["items"]]
    assert ids == sorted(ids) and len(ids) == 14
    by_id = {i["item_id"]: i for i in body["items"]}
    assert (by_id["p0"]["answer_idx"], by_id["p0"]["split"], by_id["q5"]["answer_idx"]) == (2, "private", 2)
    assert _sha(body["items"]) == body["sha256"]
    old = client.get(f"{base}/answer-key/versions/1", headers=owner).json()
    assert (old["current"], old["sha256"], {i["item_id"]: i["answer_idx"] for i in old["items"]}["p0"]) == (
        False,
        bench["answer_key_sha256"],
        1,
    )
    put = client.put(f"{base}/answer-key", json={"items": body["items"]}, headers=owner)
    assert (put.status_code, put.json()["created"]) == (200, False)


def test_versions_page_newest_first_through_the_cursor(client: TestClient, owner: dict[str, str]) -> None:
    made = benchmark(client, owner, name="paged")
    base = f"/v1/benchmarks/{made['id']}"
    for n in range(2, 6):  # versions 2..5: n public items
        assert client.put(f"{base}/answer-key", json={"items": film_key_items(n)}, headers=owner).status_code == 201
    pages, cursor = [], None
    for _ in range(5):  # three pages, and two more than that to fail on
        query = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        r = client.get(f"{base}/answer-key/versions", params=query, headers=owner)
        assert r.status_code == 200, r.text
        pages.append([(v["version"], v["n_public"], v["n_private"], v["current"]) for v in r.json()["items"]])
        cursor = r.json()["next_cursor"]
        if cursor is None:
            break
    assert pages == [[(5, 5, 4, True), (4, 4, 4, False)], [(3, 3, 4, False), (2, 2, 4, False)], [(1, 10, 4, False)]]
    for bad in ({"cursor": "!!"}, {"limit": 0}, {"limit": 101}):
        r = client.get(f"{base}/answer-key/versions", params=bad, headers=owner)
        assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
        assert r.json()["errors"][0]["loc"][-1] in ("cursor", "limit")


def test_unknown_versions_and_benchmarks_are_404_and_bad_numbers_422(
    client: TestClient, owner: dict[str, str], bench: dict
) -> None:
    base = f"/v1/benchmarks/{bench['id']}"
    for method, url in (
        ("get", f"{base}/answer-key/versions/3"),
        ("post", f"{base}/answer-key/versions/3/restore"),
        ("get", "/v1/benchmarks/nope/answer-key/versions"),
        ("get", "/v1/benchmarks/nope/answer-key/versions/1"),
        ("post", "/v1/benchmarks/nope/answer-key/versions/1/restore"),
    ):
        r = getattr(client, method)(url, headers=owner)
        assert (r.status_code, r.headers["content-type"]) == (404, "application/problem+json"), url
    for number in ("0", "x", str(2**31)):
        for method, url in (
            ("get", f"{base}/answer-key/versions/{number}"),
            ("post", f"{base}/answer-key/versions/{number}/restore"),
        ):
            r = getattr(client, method)(url, headers=owner)
            assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["path", "version"], (url, r.text)
    assert [v for v, _, _ in _versions(client, bench["id"], owner)] == [2, 1]


@pytest.mark.slow
def test_a_refused_restore_changes_nothing(
    client: TestClient, owner: dict[str, str], bench: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version the scorer's checks refuse today (here: a stricter check of private items) is a 422 naming the
    item, as a PUT of it would be; refusals of the caller (no benchmarks:write, not an owner, no key) are 403/401.
    Versions, current version, boards and audit log stay as they were."""

    def no_answer_1(items: list[Any], params: Any) -> None:
        for n, item in enumerate(items):
            if item.answer_idx == 1 and item.split == "private":
                raise InvalidInput("answer 1 is retired", ("answer_key", "items", n, "answer_idx"))

    spec = SCORERS["film_mcq"]
    base = f"/v1/benchmarks/{bench['id']}"
    cora = api_key(client, "estimators:run", name="cora")
    cora_id = client.get("/v1/api-keys/self", headers=cora).json()["id"]
    assert client.post(f"{base}/owners", json={"key_id": cora_id}, headers=owner).status_code == 201

    def state() -> tuple:
        return (
            _versions(client, bench["id"], owner),
            client.get(base).json()["answer_key_version"],
            _board(client, bench["id"], "public", owner),
            _board(client, bench["id"], "private", owner),
            _audit(client, bench["id"], owner),
        )

    before = state()
    assert before[1] == 2
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=no_answer_1))
    r = client.post(f"{base}/answer-key/versions/1/restore", headers=owner)
    assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json", r.text
    # the version's items are sorted by item_id (p0 first); the PUT names p0 at its place in the list sent (10)
    assert r.json()["errors"][0]["loc"] == ["body", "answer_key", "items", 0, "answer_idx"]
    put = client.put(f"{base}/answer-key", json={"items": film_key_items()}, headers=owner)
    assert put.status_code == 422 and put.json()["detail"] == r.json()["detail"] == "answer 1 is retired"
    assert put.json()["errors"][0]["loc"] == ["body", "answer_key", "items", 10, "answer_idx"]
    monkeypatch.setitem(SCORERS, "film_mcq", spec)
    other = api_key(client, "benchmarks:write", name="oscar")
    for headers, status in ((cora, 403), (other, 403), ({}, 401)):
        refused = client.post(f"{base}/answer-key/versions/1/restore", headers=headers)
        assert refused.status_code == status, refused.text
    assert state() == before


def test_the_client_and_the_command_line(
    client: TestClient, owner: dict[str, str], bench: dict, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    c = Client(http=client)
    c.headers = owner

    def run(*argv: str) -> Any:
        code = main(list(argv), client=c)
        captured = capsys.readouterr()
        assert code == 0, captured.err
        return json.loads(captured.out)

    listed = run("answer-key-versions", bench["id"])
    assert [(v["version"], v["current"]) for v in listed] == [(2, True), (1, False)]
    assert c.answer_key_versions(bench["id"], limit=1) == listed[:1]
    out = tmp_path / "v1.json"
    written = run("answer-key-get", bench["id"], "1", str(out))
    saved = json.loads(out.read_text())
    assert written == {"written": str(out), "version": 1, "items": 14}
    assert _sha(saved["items"]) == listed[1]["sha256"] == c.answer_key_version(bench["id"], 1)["sha256"]
    assert run("answer-key-get", bench["id"], "2")["items"] == c.answer_key_version(bench["id"], 2)["items"]
    restored = run("answer-key-restore", bench["id"], "1")
    assert (restored["answer_key_version"], restored["created"]) == (3, True)
    again = run("answer-key-put", bench["id"], f"@{out}")
    assert (again["answer_key_version"], again["created"]) == (3, False)
    assert c.restore_answer_key(bench["id"], 3)["created"] is False
    assert main(["answer-key-restore", bench["id"], "9"], client=c) == 1
    assert capsys.readouterr().err.startswith("estibench: 404 ")
    assert main(["answer-key-get", bench["id"], "1", str(tmp_path / "no" / "such" / "dir.json")], client=c) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["answer-key-versions", bench["id"]], client=Client(http=client)) == 1
    assert capsys.readouterr().err.startswith("estibench: 401 ")
