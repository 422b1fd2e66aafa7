"""``ESTIBENCH_REQUIRE_KEYS``: estimator runs need ``estimators:run``; a key sees only its own runs."""

import math

import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN, api_key, serving

URL = "/v1/estimators/compression.nml_regret"


@pytest.fixture
def locked(settings):
    with serving(settings, require_keys=True) as c:
        yield c


def test_runs_need_a_key_with_the_scope(locked: TestClient) -> None:
    assert locked.post(URL, json={"num_symbols": 3, "n": 4}).status_code == 401
    assert (
        locked.post(URL, json={"num_symbols": 3, "n": 4}, headers=api_key(locked, "submissions:write")).status_code
        == 403
    )
    runner = api_key(locked, "estimators:run")
    r = locked.post(URL, json={"num_symbols": 3, "n": 4}, headers=runner)
    assert r.status_code == 200 and r.json()["result"]["log_c_nats"] == pytest.approx(
        math.log(7.21875), abs=1e-12
    )  # C(3,4)


def test_a_key_sees_only_its_own_runs(locked: TestClient) -> None:
    alice, bob = api_key(locked, "estimators:run"), api_key(locked, "estimators:run")
    run = locked.post(URL, json={"num_symbols": 2, "n": 1}, headers=alice).json()
    assert [r["id"] for r in locked.get("/v1/runs", headers=alice).json()["items"]] == [run["id"]]
    assert locked.get("/v1/runs", headers=bob).json()["items"] == []
    assert locked.get(f"/v1/runs/{run['id']}", headers=bob).status_code == 404
    assert locked.get(f"/v1/runs/{run['id']}", headers=alice).status_code == 200
    assert locked.get("/v1/runs").status_code == 401
    assert len(locked.get("/v1/runs", headers=ADMIN).json()["items"]) == 1
