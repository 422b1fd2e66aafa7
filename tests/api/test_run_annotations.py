"""``PATCH /v1/runs/{id}``: tags and a note per (run, key), within their bounds, never changing the run; shown by
``GET /v1/runs/{id}`` and ``GET /v1/runs`` to the key that set them only."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import api_key

URL = "/v1/estimators/compression.nml_regret"


def _run(client: TestClient, headers: dict[str, str] | None = None, n: int = 2) -> dict[str, Any]:
    r = client.post(URL, json={"num_symbols": 2, "n": n}, headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def _without_view(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k not in ("tags", "note")}


def test_each_key_tags_its_own_view_and_the_run_never_changes(client: TestClient) -> None:
    alice, bob = api_key(client, "estimators:run", name="alice"), api_key(client, "estimators:run", name="bob")
    shared = _run(client)
    before = client.get(f"/v1/runs/{shared['id']}").json()
    assert (before["tags"], before["note"]) == ({}, None)
    r = client.patch(
        f"/v1/runs/{shared['id']}", json={"tags": {"lr": "3e-4", "exp.v2": "a"}, "note": "x"}, headers=alice
    )
    assert r.status_code == 200 and r.json() == {"id": shared["id"], "tags": {"lr": "3e-4", "exp.v2": "a"}, "note": "x"}
    client.patch(f"/v1/runs/{shared['id']}", json={"tags": {"mine": "bob"}}, headers=bob)
    seen = {who: client.get(f"/v1/runs/{shared['id']}", headers=h).json() for who, h in (("a", alice), ("b", bob))}
    assert (seen["a"]["tags"], seen["a"]["note"]) == ({"lr": "3e-4", "exp.v2": "a"}, "x")
    assert (seen["b"]["tags"], seen["b"]["note"]) == ({"mine": "bob"}, None)
    assert client.get(f"/v1/runs/{shared['id']}").json() == before
    assert _without_view(seen["a"]) == _without_view(before)
    again = _run(client)
    assert again["cached"] and again["id"] == shared["id"] and again["params_sha256"] == shared["params_sha256"]
    listed = client.get("/v1/runs", headers=alice).json()["items"]
    assert [(i["id"], i["tags"]) for i in listed] == [(shared["id"], {"lr": "3e-4", "exp.v2": "a"})]
    # a member left out is kept; a null note clears it
    client.patch(f"/v1/runs/{shared['id']}", json={"note": "y"}, headers=alice)
    assert client.get(f"/v1/runs/{shared['id']}", headers=alice).json()["tags"] == {"lr": "3e-4", "exp.v2": "a"}
    client.patch(f"/v1/runs/{shared['id']}", json={"note": None}, headers=alice)
    assert client.get(f"/v1/runs/{shared['id']}", headers=alice).json()["note"] is None


def test_anonymous_callers_cannot_tag_and_keys_tag_only_runs_they_see(client: TestClient) -> None:
    alice, bob = api_key(client, "estimators:run", name="alice"), api_key(client, "estimators:run", name="bob")
    own = _run(client, alice, n=3)
    r = client.patch(f"/v1/runs/{own['id']}", json={"tags": {"a": "b"}})
    assert r.status_code == 401 and r.headers["content-type"] == "application/problem+json"
    assert client.patch(f"/v1/runs/{own['id']}", json={"tags": {"a": "b"}}, headers=bob).status_code == 404
    assert client.patch("/v1/runs/no-such-run", json={"tags": {}}, headers=alice).status_code == 404


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"tags": {f"k{i}": "v" for i in range(33)}}, ["body", "tags"]),
        ({"tags": {"a b": "v"}}, ["body", "tags", "a b", "[key]"]),
        ({"tags": {"k" * 65: "v"}}, ["body", "tags", "k" * 65, "[key]"]),
        ({"tags": {"": "v"}}, ["body", "tags", "", "[key]"]),
        ({"tags": {"k": "v" * 257}}, ["body", "tags", "k"]),
        ({"tags": {"k": 1}}, ["body", "tags", "k"]),
        ({"note": "n" * 4001}, ["body", "note"]),
        ({"colour": "red"}, ["body", "colour"]),
    ],
)
def test_bounds_are_422_naming_the_field(client: TestClient, body: dict[str, Any], loc: list[str]) -> None:
    alice = api_key(client, "estimators:run", name="alice")
    run = _run(client)
    r = client.patch(f"/v1/runs/{run['id']}", json=body, headers=alice)
    assert r.status_code == 422 and [e["loc"] for e in r.json()["errors"]] == [loc]


def test_the_largest_annotation_is_kept_whole(client: TestClient) -> None:
    alice = api_key(client, "estimators:run", name="alice")
    run = _run(client)
    tags = {f"{i:02d}" + "k" * 62: "v" * 256 for i in range(32)}
    assert (
        client.patch(f"/v1/runs/{run['id']}", json={"tags": tags, "note": "é" * 4000}, headers=alice).status_code == 200
    )
    got = client.get(f"/v1/runs/{run['id']}", headers=alice).json()
    assert got["tags"] == tags and got["note"] == "é" * 4000


def test_client_tags_and_finds_by_tag(client: TestClient) -> None:
    from client import Client

    alice = Client(http=client)
    alice.headers = api_key(client, "estimators:run", name="alice")
    run = alice.run("compression.nml_regret", {"num_symbols": 2, "n": 4})
    assert alice.annotate_run(run["id"], tags={"exp": "a"}, note="first") == {
        "id": run["id"],
        "tags": {"exp": "a"},
        "note": "first",
    }
    assert alice.annotate_run(run["id"], note=None)["note"] is None
    assert [r["id"] for r in alice.runs(filters=['tag.exp="a"'])] == [run["id"]]
    assert alice.runs(filters=['tag.exp="b"']) == []
