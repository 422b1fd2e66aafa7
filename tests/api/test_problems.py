"""Every error is application/problem+json with the right status; 422 bodies name the field."""

import json
import math

import pytest
from fastapi.testclient import TestClient

URL = "/v1/estimators/minhash.variance"
GOOD = {"intersection": 50, "union": 100, "universe": 1009, "num_perm": 64}


def _is_problem(r, status: int) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == status and body["title"]
    return body


def test_undecodable_json_is_400(client: TestClient) -> None:
    _is_problem(client.post(URL, content=b'{"intersection": 5,', headers={"content-type": "application/json"}), 400)


def test_deeply_nested_json_is_400_not_500(client: TestClient) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    _is_problem(client.post(URL, content=body, headers={"content-type": "application/json"}), 400)


def test_wrong_content_type_is_415(client: TestClient) -> None:
    _is_problem(client.post(URL, content=json.dumps(GOOD), headers={"content-type": "text/plain"}), 415)


def test_body_over_limit_is_413(client: TestClient) -> None:
    big = b'{"x":"' + b"a" * (9 * 1024 * 1024) + b'"}'
    _is_problem(client.post(URL, content=big, headers={"content-type": "application/json"}), 413)


@pytest.mark.parametrize(
    ("patch", "loc"),
    [
        ({"num_perm": "64"}, ["body", "num_perm"]),
        ({"num_perm": True}, ["body", "num_perm"]),
        ({"num_perm": 0}, ["body", "num_perm"]),
        ({"surprise": 1}, ["body", "surprise"]),
        ({"union": -3}, ["body", "union"]),
    ],
)
def test_schema_errors_are_422_naming_the_field(client: TestClient, patch: dict, loc: list) -> None:
    body = _is_problem(client.post(URL, json={**GOOD, **patch}), 422)
    assert loc in [e["loc"] for e in body["errors"]]


@pytest.mark.parametrize("value", ["NaN", "1e400", "-Infinity"])
def test_non_finite_numbers_are_422_naming_the_field(client: TestClient, value: str) -> None:
    body = '{"model": "gaussian_linear", "X": [[1.0], [2.0], [3.0]], "X_test": [[1.5]], "sigma": %s}'
    url = "/v1/estimators/compression.batch_regret"
    ok = client.post(url, content=body % "1.0", headers={"content-type": "application/json"})
    # leverage h = 1.5^2 / (1 + 4 + 9); pNML regret log(1 + h)
    assert ok.json()["result"]["mean_regret_nats"] == pytest.approx(math.log1p(2.25 / 14), rel=1e-12)
    errors = _is_problem(client.post(url, content=body % value, headers={"content-type": "application/json"}), 422)
    assert errors["errors"] == [
        {"loc": ["body", "sigma"], "msg": "Input should be a finite number", "type": "finite_number"}
    ]


def test_domain_error_is_422_naming_the_field(client: TestClient) -> None:
    body = _is_problem(client.post(URL, json={**GOOD, "intersection": 150}), 422)
    assert any(e["loc"][0] == "body" and len(e["loc"]) >= 2 for e in body["errors"])


def test_unknown_routes_are_404_problems(client: TestClient) -> None:
    _is_problem(client.get("/v1/estimators/no.such"), 404)
    _is_problem(client.post("/v1/estimators/no.such", json={}), 404)
    _is_problem(client.get("/v1/runs/does-not-exist"), 404)
    _is_problem(client.get("/v1/nothing-here"), 404)


def test_failed_request_stores_nothing(client: TestClient) -> None:
    client.post(URL, json={**GOOD, "num_perm": 0})
    assert client.get("/v1/runs").json()["items"] == []
