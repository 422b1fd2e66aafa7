"""Integer fields accept integral numbers such as ``4032.0`` (JSON Schema's ``integer``) and nothing else."""

import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN


def test_estimator_integral_float_is_the_same_call(client: TestClient) -> None:
    first = client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": 2.0, "n": 2.0})
    assert first.status_code == 200, first.text
    assert first.json()["result"]["log_c_nats"] == pytest.approx(0.9162907318741551, rel=1e-12)  # log 2.5
    again = client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": 2, "n": 2})
    assert again.json()["params_sha256"] == first.json()["params_sha256"]
    assert again.json()["id"] == first.json()["id"] and again.json()["cached"] is True


@pytest.mark.parametrize("bad", [2.5, True, "2", 1e300])
def test_estimator_non_integral_rejected(client: TestClient, bad: object) -> None:
    r = client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": bad, "n": 2})
    assert r.status_code == 422
    assert r.json()["errors"][0]["loc"] == ["body", "num_symbols"]


def test_bounds_still_apply_to_integral_floats(client: TestClient) -> None:
    r = client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": 0.0, "n": 2})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "num_symbols"]


def test_job_params_accept_integral_floats(client: TestClient) -> None:
    params = {"num_symbols": 2.0, "n": 2.0}
    r = client.post("/v1/jobs", json={"kind": "estimator", "name": "compression.nml_regret", "params": params})
    assert r.status_code in (201, 202), r.text


def test_scorer_items_and_benchmark_fields_accept_integral_floats(client: TestClient) -> None:
    key = [{"item_id": f"q{i}", "num_options": 4.0, "answer_idx": 1.0, "film_id": "f"} for i in range(4)]
    preds = [{"item_id": f"q{i}", "choice_idx": 1.0 if i < 3 else 2} for i in range(4)]
    body = {"answer_key": {"items": key}, "predictions": {"items": preds}, "params": {}}
    r = client.post("/v1/scorers/film_mcq/score", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["scores"]["accuracy"]["value"] == pytest.approx(0.75, abs=1e-12)
    bench = {"name": "ints", "scorer": "film_mcq", "max_submissions_per_day": 5.0, "answer_key": {"items": key}}
    r = client.post("/v1/benchmarks", json=bench, headers=ADMIN)
    assert r.status_code == 201, r.text
    preds[0]["choice_idx"] = 1.5
    r = client.post("/v1/scorers/film_mcq/score", json=body | {"predictions": {"items": preds}})
    assert r.status_code == 422
    assert r.json()["errors"][0]["loc"][-1] == "choice_idx"
