"""``/v1/health``: 200 with the database, 503 problem without; every response carries X-Request-ID."""

from fastapi.testclient import TestClient

from api.app import create_app
from usecases.version import CODE_VERSION


def test_health_ok(client: TestClient) -> None:
    r = client.get("/v1/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "version": CODE_VERSION, "database": "ok"}
    assert len(r.headers["x-request-id"]) == 32


def test_request_id_is_echoed_and_invalid_ones_replaced(client: TestClient) -> None:
    assert client.get("/v1/health", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"] == "abc-123"
    assert client.get("/v1/health", headers={"X-Request-ID": "bad id\t"}).headers["x-request-id"] != "bad id\t"


def test_health_503_when_database_unreachable(settings, tmp_path) -> None:
    broken = settings.model_copy(update={"database_url": f"sqlite:///{tmp_path}/missing/dir/x.db"})
    with TestClient(create_app(broken), raise_server_exceptions=False) as c:
        r = c.get("/v1/health")
    assert r.status_code == 503
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["status"] == 503 and r.json()["instance"] == r.headers["x-request-id"]
