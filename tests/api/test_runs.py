"""The run envelope, canonical params, the cache and the keyset-paginated run list ."""

import hashlib
import json

from fastapi.testclient import TestClient

from service.registry import ESTIMATORS

URL = "/v1/estimators/minhash.variance"
BODY = {"intersection": 50, "union": 100, "universe": 1009, "num_perm": 64}


def _canonical_sha(name: str, body: dict) -> str:
    params = ESTIMATORS[name].params_model.model_validate(body)
    text = json.dumps(params.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_envelope_and_cache_hit(client: TestClient) -> None:
    first = client.post(URL, json=BODY)
    assert first.status_code == 200, first.text
    run = first.json()
    assert set(run) == {
        "id",
        "kind",
        "name",
        "version",
        "params_sha256",
        "cached",
        "duration_ms",
        "created_at",
        "artifacts",
        "result",
    }
    assert (run["kind"], run["name"], run["cached"]) == ("estimator", "minhash.variance", False)
    assert run["params_sha256"] == _canonical_sha("minhash.variance", BODY)
    reordered = dict(reversed(list(BODY.items())))
    again = client.post(URL, json=reordered).json()
    assert again["cached"] is True
    assert {k: again[k] for k in ("id", "created_at", "duration_ms", "result")} == {
        k: run[k] for k in ("id", "created_at", "duration_ms", "result")
    }


def test_explicit_defaults_hit_the_same_cache_entry(client: TestClient) -> None:
    spec = ESTIMATORS["minhash.variance"]
    full = spec.params_model.model_validate(BODY).model_dump(mode="json")
    a = client.post(URL, json=BODY).json()
    b = client.post(URL, json=full).json()
    assert b["id"] == a["id"] and b["cached"] is True


def test_get_run_by_id(client: TestClient) -> None:
    run = client.post(URL, json=BODY).json()
    got = client.get(f"/v1/runs/{run['id']}").json()
    assert got["result"] == run["result"] and got["params_sha256"] == run["params_sha256"]


def test_runs_keyset_pagination(client: TestClient) -> None:
    ids = [client.post(URL, json={**BODY, "intersection": 10 + i}).json()["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        page = client.get("/v1/runs", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [r["id"] for r in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]
    only = client.get("/v1/runs", params={"name": "minhash.variance", "kind": "estimator"}).json()
    assert len(only["items"]) == 5
    assert client.get("/v1/runs", params={"name": "minhash.sketch"}).json()["items"] == []


def test_bad_cursor_is_422(client: TestClient) -> None:
    r = client.get("/v1/runs", params={"cursor": "!!!"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "cursor"]
