"""Rate limiting (429 + Retry-After, per key or address; Redis-shared across apps) and Prometheus ``/metrics``."""

from contextlib import AbstractContextManager

import pytest
from fastapi.testclient import TestClient

from tests.factories import api_key, serving
from usecases.settings import Settings


def limited(settings: Settings, **extra: object) -> AbstractContextManager[TestClient]:
    update = {"rate_limit_per_minute": 60, "rate_limit_burst": 3, **extra}
    return serving(settings, **update)


def test_rate_limit_per_caller_with_retry_after(settings: Settings) -> None:
    with limited(settings, rate_limit_per_minute=12) as c:  # a token every 5 s: none refills during the test
        key = api_key(c, "estimators:run")  # the admin's request counts for the admin key, not for this one
        codes = [c.get("/v1/runs").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        r = c.get("/v1/runs")
        assert r.status_code == 429 and r.headers["content-type"] == "application/problem+json"
        assert 3 <= int(r.headers["retry-after"]) <= 5  # the next token is due 5 s after the burst was spent
        assert [c.get("/v1/runs", headers=key).status_code for _ in range(3)] == [200, 200, 200]
        assert c.get("/v1/health").status_code == 200  # health and metrics are exempt


def test_rate_limit_is_shared_through_redis(client: TestClient, settings: Settings, redis_url: str) -> None:
    key = api_key(client, "estimators:run")  # a fresh key: its bucket in Redis is this test's alone
    slow = {"redis_url": redis_url, "rate_limit_per_minute": 1}  # no token refills during the test, however slow
    with limited(settings, **slow) as a, limited(settings, **slow) as b:
        codes = [app.get("/v1/estimators", headers=key).status_code for app in (a, b, a, b)]
    assert codes == [200, 200, 200, 429]


@pytest.mark.slow
def test_default_limit_is_generous(client: TestClient) -> None:
    assert all(client.get("/v1/estimators").status_code == 200 for _ in range(200))


def test_metrics_count_requests_by_route_and_report_jobs(client: TestClient) -> None:
    for _ in range(3):
        client.get("/v1/runs/abc")
    text = client.get("/metrics").text
    assert 'estibench_http_requests_total{method="GET",route="/v1/runs/{run_id}",status="404"} 3.0' in text
    assert 'estibench_http_request_duration_seconds_count{method="GET",route="/v1/runs/{run_id}"} 3.0' in text
    assert 'estibench_jobs{status="queued"} 0.0' in text
    assert "estibench_queue_depth 0.0" in text
    assert client.get("/metrics").headers["content-type"].startswith("text/plain")


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/metrics"])
def test_metrics_not_in_openapi(client: TestClient, path: str) -> None:
    assert path not in client.get("/openapi.json").json()["paths"]
