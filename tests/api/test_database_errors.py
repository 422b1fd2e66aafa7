"""An unreachable database is a 503 problem on every route (not only ``/v1/health``), and database errors reach the
log without SQL parameters or the driver's message (PostgreSQL's DETAIL quotes row values)."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from db.engine import make_engines
from tests import support_estimators
from tests.factories import ADMIN, serving
from usecases import runs
from usecases.logs import JsonFormatter
from usecases.settings import Settings

SECRET = "secret-parameter-value-7f3a"


@pytest.fixture(params=["sqlite", "postgresql"])
def unreachable(request: pytest.FixtureRequest, settings: Settings, tmp_path: Path) -> Settings:
    """A missing SQLite directory, or a PostgreSQL port nobody listens on."""
    url = (
        f"sqlite:///{tmp_path}/missing/dir/x.db"
        if request.param == "sqlite"
        else "postgresql+psycopg://postgres@127.0.0.1:9/estibench"
    )
    return settings.model_copy(update={"database_url": url})


def test_every_route_answers_503_when_the_database_is_unreachable(unreachable: Settings, test_estimator: str) -> None:
    calls = [
        ("GET", "/v1/runs", {}, None),
        ("GET", "/v1/runs/00000000-0000-0000-0000-000000000000", {}, None),
        ("GET", "/v1/benchmarks", {}, None),
        ("GET", "/v1/benchmarks/b/leaderboard", {}, None),
        ("GET", "/v1/jobs", {}, None),
        ("GET", "/v1/api-keys", ADMIN, None),
        ("POST", f"/v1/estimators/{support_estimators.NAME}", {}, {"values": [1.0]}),
        ("POST", f"/v1/estimators/{support_estimators.NAME}", ADMIN, {"values": [2.0]}),
        ("POST", "/v1/benchmarks/b/submissions", ADMIN, {"model": "m", "predictions": {"items": []}}),
    ]
    with serving(unreachable) as c:
        for method, url, headers, body in calls:
            r = c.request(method, url, headers=headers, json=body)
            assert r.status_code == 503, (method, url, r.status_code, r.text)
            assert r.headers["content-type"] == "application/problem+json"
            assert r.headers["retry-after"] == "5"
            assert r.json()["detail"] == "The database is unavailable; retry shortly."


def test_engine_errors_carry_no_parameters(db_url: str) -> None:
    engines = make_engines(db_url)
    try:
        with engines.write.begin() as conn:
            conn.execute(text("CREATE TABLE leak_probe (id INTEGER PRIMARY KEY, note TEXT)"))
        with pytest.raises(IntegrityError) as caught, engines.write.begin() as conn:
            for _ in range(2):
                conn.execute(text("INSERT INTO leak_probe (id, note) VALUES (:id, :note)"), {"id": 1, "note": SECRET})
        assert SECRET not in str(caught.value)
        assert "SQL parameters hidden" in str(caught.value)
    finally:
        with engines.write.begin() as conn:
            conn.execute(text("DROP TABLE leak_probe"))
        engines.dispose()


def test_a_database_error_in_a_route_is_logged_without_values(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A unique violation whose PostgreSQL DETAIL quotes the value: the 500's log line names the error class and the
    SQL text only."""
    services = client.app.state.services  # type: ignore[attr-defined]

    def failing_list(*_args: object, **_kwargs: object) -> None:
        with services.engines.write.begin() as conn:
            sql = text("INSERT INTO benchmark_probe_table_that_leaks (x) VALUES (:x)")
            conn.execute(text("CREATE TEMPORARY TABLE benchmark_probe_table_that_leaks (x TEXT UNIQUE)"))
            conn.execute(sql, {"x": SECRET})
            conn.execute(sql, {"x": SECRET})

    monkeypatch.setattr(runs, "search_runs", failing_list)
    caplog.clear()
    r = client.get("/v1/runs")
    assert r.status_code == 500
    err = "\n".join(JsonFormatter().format(rec) for rec in caplog.records)
    assert "database error" in err and "benchmark_probe_table_that_leaks" in err
    assert SECRET not in err
