"""Cost caps: above ``hard_cap`` a 422 naming the cap; nothing is stored for a refused request."""

from fastapi.testclient import TestClient

from service.registry import ESTIMATORS

URL = "/v1/estimators/compression.double_descent"
HUGE = {"experiment": "rf_regression", "n": 2000, "widths": [5000] * 40, "reps": 10}


def test_above_hard_cap_is_422_naming_the_cap(client: TestClient) -> None:
    spec = ESTIMATORS["compression.double_descent"]
    assert spec.cost(spec.params_model.model_validate(HUGE)) > spec.hard_cap
    r = client.post(URL, json=HUGE)
    assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
    cost = spec.cost(spec.params_model.model_validate(HUGE))
    assert r.json()["errors"] == [
        {"loc": ["body"], "msg": f"cost {cost:.4g} > hard_cap {spec.hard_cap:.4g} {spec.cost_unit}", "type": "cost_cap"}
    ]
    assert client.get("/v1/runs").json()["items"] == []


def test_catalog_shows_caps(client: TestClient) -> None:
    spec = ESTIMATORS["compression.double_descent"]
    d = client.get("/v1/estimators/compression.double_descent").json()
    assert (d["sync_budget"], d["hard_cap"], d["cost_unit"]) == (spec.sync_budget, spec.hard_cap, spec.cost_unit)
    assert d["params_schema"]["additionalProperties"] is False
