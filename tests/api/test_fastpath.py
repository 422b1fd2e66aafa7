"""Cached estimator calls answered before routing (api/fastpath.py): the same envelope as the route, and every
cross-cutting rule (request id, rate limit, metrics, REQUIRE_KEYS, validation) still applies."""

import pytest
from fastapi.testclient import TestClient

from tests.factories import api_key, serving

URL = "/v1/estimators/compression.nml_regret"
BODY = {"num_symbols": 10, "n": 1000}


def test_hit_is_the_stored_envelope_with_request_id_and_metrics(client: TestClient) -> None:
    first = client.post(URL, json=BODY)
    hits = [
        client.post(URL, json=dict(reversed(list(BODY.items()))), headers={"X-Request-ID": f"r{i}"}) for i in range(2)
    ]
    for i, hit in enumerate(hits):
        assert hit.status_code == 200 and hit.headers["x-request-id"] == f"r{i}"
        assert hit.json() == {**first.json(), "cached": True}
    text = client.get("/metrics").text
    assert f'estibench_http_requests_total{{method="POST",route="{URL}",status="200"}} 3.0' in text


def test_misses_and_invalid_bodies_reach_the_route(client: TestClient) -> None:
    client.post(URL, json=BODY)
    bad = client.post(URL, json={**BODY, "extra": 1})
    assert bad.status_code == 422 and ["body", "extra"] in [e["loc"] for e in bad.json()["errors"]]
    other = client.post(URL, json={**BODY, "n": 999})
    assert other.status_code == 200 and other.json()["cached"] is False
    assert client.post(URL, content=b"{", headers={"content-type": "application/json"}).status_code == 400


def test_require_keys_is_not_bypassed(settings) -> None:
    with serving(settings, require_keys=True) as c:
        runner = api_key(c, "estimators:run")
        assert c.post(URL, json=BODY, headers=runner).status_code == 200
        assert c.post(URL, json=BODY).status_code == 401


def test_rate_limit_applies_to_hits(settings) -> None:
    update = {"rate_limit_per_minute": 1, "rate_limit_burst": 3}  # no token refills during the test
    with serving(settings, **update) as c:
        codes = [c.post(URL, json=BODY).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


@pytest.mark.parametrize("size", [9 * 1024 * 1024])
def test_body_limit_applies_before_the_fast_path(client: TestClient, size: int) -> None:
    r = client.post(URL, content=b'{"n":' + b" " * size + b"1}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.headers["content-type"] == "application/problem+json"
