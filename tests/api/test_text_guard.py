"""NUL and lone surrogates are rejected in every text a request carries (body fields at any depth, object keys,
query parameters, the path) with a 422 naming the field, on SQLite and PostgreSQL alike (where they gave 500, and
a NUL inside an answer-key item_id made every later submission to that benchmark a 500)."""

import json

import pytest
from fastapi.testclient import TestClient

from api.text_guard import MESSAGE
from tests.factories import ADMIN, api_key, benchmark, film_key_items, film_predictions


def send(client: TestClient, method: str, url: str, body: object, headers: dict | None = None):
    """``body`` as ASCII JSON (lone surrogates become ``\\uD800`` escapes, as any JSON encoder writes them)."""
    headers = {**(headers or {}), "content-type": "application/json"}
    return client.request(method, url, content=json.dumps(body).encode(), headers=headers)


def assert_rejected(r, loc: list) -> None:
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"] == [{"loc": loc, "msg": MESSAGE, "type": "string_invalid_character"}]


@pytest.fixture
def bench_id(client: TestClient) -> str:
    return benchmark(client, ADMIN)["id"]


@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b", "\udfff"])
def test_key_names_and_descriptions(client: TestClient, bad: str) -> None:
    assert_rejected(send(client, "POST", "/v1/api-keys", {"name": bad, "scopes": ["admin"]}, ADMIN), ["body", "name"])
    body = {"name": "x", "scorer": "film_mcq", "description": bad, "answer_key": {"items": film_key_items()}}
    assert_rejected(send(client, "POST", "/v1/benchmarks", body, ADMIN), ["body", "description"])
    assert client.get("/v1/benchmarks").json()["items"] == []


def test_raw_utf8_encoded_surrogates_are_rejected_too(client: TestClient) -> None:
    body = b'{"name": "a\xed\xa0\x80", "scopes": ["admin"]}'
    r = client.post("/v1/api-keys", content=body, headers={**ADMIN, "content-type": "application/json"})
    assert_rejected(r, ["body", "name"])


def test_answer_key_item_ids_model_names_and_metadata_keys(client: TestClient, bench_id: str) -> None:
    items = film_key_items()
    items[3]["item_id"] = "q3\x00"
    body = {"name": "other", "scorer": "film_mcq", "answer_key": {"items": items}}
    assert_rejected(
        client.post("/v1/benchmarks", json=body, headers=ADMIN), ["body", "answer_key", "items", 3, "item_id"]
    )
    put = client.put(f"/v1/benchmarks/{bench_id}/answer-key", json={"items": items}, headers=ADMIN)
    assert_rejected(put, ["body", "items", 3, "item_id"])
    alice = api_key(client, "submissions:write", name="alice")
    url = f"/v1/benchmarks/{bench_id}/submissions"
    sub = {"model": "m\x00", "predictions": film_predictions(5), "metadata": {}}
    assert_rejected(client.post(url, json=sub, headers=alice), ["body", "model"])
    sub = {"model": "m", "predictions": film_predictions(5), "metadata": {"notes": {"k\ud83d": 1}}}
    assert_rejected(send(client, "POST", url, sub, alice), ["body", "metadata", "notes", "k\\ud83d"])
    ok = client.post(url, json={"model": "m", "predictions": film_predictions(5), "metadata": {}}, headers=alice)
    assert ok.status_code == 201, ok.text  # the benchmark still takes submissions


def test_scorer_and_job_bodies(client: TestClient) -> None:
    preds = film_predictions(5)
    preds["items"][0]["item_id"] = "\x00"
    body = {"answer_key": {"items": film_key_items()}, "predictions": preds}
    assert_rejected(
        client.post("/v1/scorers/film_mcq/score", json=body), ["body", "predictions", "items", 0, "item_id"]
    )
    job = {"kind": "scorer", "name": "film_mcq", "params": body}
    assert_rejected(client.post("/v1/jobs", json=job), ["body", "params", "predictions", "items", 0, "item_id"])


def test_query_and_path(client: TestClient) -> None:
    assert_rejected(client.get("/v1/runs?name=a%00b"), ["query", "name"])
    assert_rejected(client.get("/v1/benchmarks/x%00y"), ["path"])


def test_escaped_backslashes_and_other_unicode_pass(client: TestClient) -> None:
    for name in ("literal \\u0000 and \\ud800", "名前 😀 é"):
        r = client.post("/v1/api-keys", json={"name": name, "scopes": ["admin"]}, headers=ADMIN)
        assert r.status_code == 201 and r.json()["name"] == name, r.text
