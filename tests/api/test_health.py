"""``/v1/health``: 200 with the database, 503 problem without; every response carries X-Request-ID."""

import time

from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from tests.factories import serving
from usecases.health import PROBE_TTL_S
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
    with serving(broken) as c:
        r = c.get("/v1/health")
    assert r.status_code == 503
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["status"] == 503 and r.json()["instance"] == r.headers["x-request-id"]


def test_a_burst_of_health_checks_costs_one_database_round_trip(client: TestClient) -> None:
    services = client.app.state.services
    calls = []
    real = services.database_probe._check
    services.database_probe._check = lambda: calls.append(1) or real()
    services.database_probe._at = float("-inf")
    assert all(client.get("/v1/health").status_code == 200 for _ in range(25))
    assert len(calls) == 1  # 25 requests inside the one-second reuse window


def test_probe_reports_an_unreachable_database_after_its_ttl() -> None:
    from usecases.health import DatabaseProbe

    up = [True]
    probe = DatabaseProbe(lambda: up[0], ttl=0.2)
    assert probe.fresh() is None and probe.status() is True
    up[0] = False
    assert probe.fresh() is True  # still within the reuse window
    time.sleep(0.25)
    assert probe.fresh() is None and probe.status() is False


def test_health_answers_503_within_about_a_second_of_the_database_stopping(client: TestClient) -> None:
    """Every query of the read engine fails from the moment ``down`` is set, as with a stopped server."""
    engine = client.app.state.services.engines.read
    down: list[bool] = []

    def refuse(*_: object) -> None:
        if down:
            raise OperationalError("SELECT 1", {}, ConnectionRefusedError("database stopped"))

    event.listen(engine, "before_cursor_execute", refuse)
    try:
        assert client.get("/v1/health").status_code == 200
        polls = []  # one poll of the loop below on this machine now: a request and the 20 ms pause
        for _ in range(5):
            t0 = time.monotonic()
            client.get("/v1/health")
            polls.append(time.monotonic() - t0 + 0.02)
        bound = PROBE_TTL_S + 3 * sorted(polls)[2]  # the reuse window, plus three polls of slack
        for want, flip in ((503, down.append), (200, lambda _: down.clear())):
            flip(True)
            t0 = time.monotonic()
            while (r := client.get("/v1/health")).status_code != want and time.monotonic() - t0 <= bound:
                assert r.status_code in (200, 503)
                time.sleep(0.02)
            assert r.status_code == want and time.monotonic() - t0 <= bound, (time.monotonic() - t0, bound)
    finally:
        event.remove(engine, "before_cursor_execute", refuse)
