"""The OpenAPI document as client generators and Swagger UI read it: unique schema titles, the two ways of sending
a key, npy uploads as application/octet-stream, one response type per leaderboard operation, fractional enums."""

from collections import Counter

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.factories import ADMIN, NPY, api_key, benchmark, npy, post_submission

pytestmark = pytest.mark.slow
"""Each test builds the whole OpenAPI document (1.5 s); tests/api/test_openapi.py's served-equals-committed check
keeps the document in make test-quick."""


def test_every_schema_title_is_unique(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    titles = Counter(s.get("title", name) for name, s in schemas.items())
    assert [t for t, n in titles.items() if n > 1] == []
    assert not [name for name in schemas if name.startswith("service__")]
    for name in ("film_mcq_answer_key_item", "film_mcq_prediction_item", "film_mcq_params", "zbb_params"):
        assert schemas[name]["title"] == name
    request = schemas["film_mcq_score_request"]["properties"]["params"]
    assert request["$ref"] == "#/components/schemas/film_mcq_params"


def test_bearer_and_api_key_are_declared_and_optional(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert doc["components"]["securitySchemes"] == {
        "bearer": {"type": "http", "scheme": "bearer", "description": "An API key: `Authorization: Bearer ek_...`."},
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "An API key in `X-API-Key`."},
    }
    assert doc["security"] == [{"bearer": []}, {"apiKey": []}, {}]
    assert client.get("/v1/benchmarks", headers={"X-API-Key": ADMIN["Authorization"][7:]}).status_code == 200


def test_npy_upload_as_octet_stream(client: TestClient) -> None:
    body = client.get("/openapi.json").json()["paths"]["/v1/arrays"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/x-npy", "application/octet-stream"}
    data = npy(np.arange(5, dtype=np.int64))
    as_npy = client.post("/v1/arrays", content=data, headers=NPY)
    as_bytes = client.post("/v1/arrays", content=data, headers={"content-type": "application/octet-stream"})
    assert as_npy.status_code == as_bytes.status_code == 201
    assert as_bytes.json()["id"] == as_npy.json()["id"] and as_bytes.json()["shape"] == [5]
    refused = client.post("/v1/arrays", content=data, headers={"content-type": "text/plain"})
    assert refused.status_code == 415


def test_leaderboard_files_have_one_response_type_each(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for suffix, media in (("csv", "text/csv"), ("ndjson", "application/x-ndjson")):
        ok = paths[f"/v1/benchmarks/{{benchmark_id}}/leaderboard.{suffix}"]["get"]["responses"]["200"]
        assert list(ok["content"]) == [media]
    owner = api_key(client, "benchmarks:write")
    bench = benchmark(client, owner)
    post_submission(client, bench, api_key(client, "submissions:write"), "m", 7)
    base = f"/v1/benchmarks/{bench['id']}/leaderboard"
    for suffix, media in (("csv", "text/csv"), ("ndjson", "application/x-ndjson")):
        own = client.get(f"{base}.{suffix}", params={"rank_by": "latest"})
        shared = client.get(base, params={"format": suffix, "rank_by": "latest"})
        assert own.status_code == 200 and own.headers["content-type"].startswith(media)
        assert own.text == shared.text and "m" in own.text
    assert client.get("/v1/benchmarks/nope/leaderboard.csv").status_code == 404


def test_fractional_enums_are_consts_with_the_same_values(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["scene3d_grounding_params"]
    items = schema["properties"]["thresholds"]["items"]
    assert items == {"type": "number", "anyOf": [{"const": 0.25}, {"const": 0.5}, {"const": 0.75}]}
