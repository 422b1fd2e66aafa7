"""The committed OpenAPI document matches the app; every operation documents its problem responses."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


@pytest.mark.slow
def test_committed_openapi_has_not_drifted() -> None:
    from scripts.export_openapi import openapi_text  # builds the app: here, not at collection

    assert DOC.read_text() == openapi_text(), "run `make openapi` and commit docs/openapi.json"


@pytest.fixture(scope="module")
def schema() -> dict:
    from scripts.export_openapi import openapi_text

    return json.loads(openapi_text())


@pytest.mark.slow
def test_every_estimator_has_its_own_typed_request_and_result(schema: dict) -> None:
    from service.registry import ESTIMATORS

    for name in ESTIMATORS:
        op = schema["paths"][f"/v1/estimators/{name}"]["post"]
        req = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        ok = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert req.split("/")[-1] != ok.split("/")[-1]
        result_ref = schema["components"]["schemas"][ok.split("/")[-1]]["properties"]["result"]["$ref"]
        result_schema = schema["components"]["schemas"][result_ref.split("/")[-1]]
        assert set(result_schema["properties"]) == set(ESTIMATORS[name].result_model.model_fields), name
        request_schema = schema["components"]["schemas"][req.split("/")[-1]]
        assert set(request_schema["properties"]) == set(ESTIMATORS[name].params_model.model_fields), name


@pytest.mark.slow
def test_error_statuses_are_documented_as_problems(schema: dict) -> None:
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            codes = set(op["responses"])
            assert "500" in codes, (method, path)
            if "requestBody" in op:
                assert {"400", "413", "415", "422"} <= codes, (method, path)
            for code, resp in op["responses"].items():
                if (code.startswith(("4", "5")) and code != "422") or (code == "422" and "content" in resp):
                    media = resp.get("content", {})
                    assert "application/problem+json" in media, (method, path, code)


def test_served_schema_equals_committed(client: TestClient) -> None:
    assert client.get("/openapi.json").json() == json.loads(DOC.read_text())
