"""One rule for every credential, cached answer or not: a present but invalid credential (unknown, revoked,
malformed, another scheme) is a 401 problem on every route, even where anonymous calls are allowed; a valid key
and no key are answered alike. Estimator calls are walked in three states: new params (computed), stored in the
database only (a fresh process), and remembered in this process (the fast path)."""

import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN, api_key, serving

URL = "/v1/estimators/compression.nml_regret"
UNKNOWN = {"Authorization": "Bearer ek_0000_unknown"}
INVALID = {
    "unknown bearer": UNKNOWN,
    "unknown x-api-key": {"X-API-Key": "ek_0000_unknown"},
    "basic": {"Authorization": "Basic dXNlcjpwYXNz"},
    "bearer without token": {"Authorization": "Bearer "},
    "token scheme": {"Authorization": "Token ek_abc"},
    "blank x-api-key": {"X-API-Key": " "},
    "over-long": {"X-API-Key": "k" * 300},
}


@pytest.fixture
def keys(client: TestClient) -> dict[str, dict[str, str]]:
    """Invalid credentials (one of them a revoked key), a valid key, and no credential at all."""
    revoked = api_key(client, "estimators:run", name="revoked")
    key_id = next(k["id"] for k in client.get("/v1/api-keys", headers=ADMIN).json()["items"] if k["name"] == "revoked")
    assert client.delete(f"/v1/api-keys/{key_id}", headers=ADMIN).status_code == 200
    return {**INVALID, "revoked": revoked, "valid": api_key(client, "estimators:run"), "none": {}}


def _expected(name: str) -> int:
    return 200 if name in ("valid", "none") else 401


def _check(response, name: str, cached: bool) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == _expected(name), (name, cached, response.text)
    if response.status_code == 401:
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["www-authenticate"] == "Bearer"
    else:
        assert response.json()["cached"] is cached


def test_estimator_calls_answer_every_credential_alike_cached_or_not(client: TestClient, settings, keys) -> None:  # type: ignore[no-untyped-def]
    for i, (name, headers) in enumerate(keys.items()):
        _check(client.post(URL, json={"num_symbols": 3, "n": 100 + i}, headers=headers), name, cached=False)
    stored = {"num_symbols": 3, "n": 99}
    assert client.post(URL, json=stored).json()["cached"] is False
    with serving(settings) as fresh:
        for name, headers in keys.items():
            _check(fresh.post(URL, json=stored, headers=headers), name, cached=True)
    for name, headers in keys.items():
        _check(client.post(URL, json=stored, headers=headers), name, cached=True)


def test_invalid_credentials_are_401_on_open_routes(client: TestClient, keys) -> None:  # type: ignore[no-untyped-def]
    bench = {
        "name": "b",
        "scorer": "film_mcq",
        "answer_key": {"items": [{"item_id": "q", "num_options": 2, "answer_idx": 0, "film_id": "f"}]},
    }
    assert client.post("/v1/benchmarks", json=bench, headers=ADMIN).status_code == 201
    for path in (
        "/v1/estimators",
        "/v1/estimators/compression.nml_regret",
        "/v1/scorers",
        "/v1/benchmarks",
        "/v1/runs",
        "/v1/jobs",
    ):
        for name, headers in keys.items():
            assert client.get(path, headers=headers).status_code == _expected(name), (path, name)


def test_invalid_body_and_invalid_credential_is_401(client: TestClient) -> None:
    """The credential is checked whatever the body; a valid key with an invalid body is the body's 422."""
    assert client.post(URL, json={"num_symbols": 0, "n": 1}, headers=UNKNOWN).status_code == 401
    assert client.post(URL, json={"num_symbols": 0, "n": 1}, headers=ADMIN).status_code == 422
