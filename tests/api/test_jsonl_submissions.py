"""Submissions as JSON Lines (``application/x-ndjson``): one prediction item per line, ``model`` and ``metadata``
in the query; the same scores as the JSON body, bad lines named by their 1-based number, the JSON body's bounds,
``Idempotency-Key`` as with JSON, and the second content type in the OpenAPI document."""

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.types import MAX_JSON_ARRAY
from tests.factories import api_key, benchmark, film_predictions

NDJSON = {"Content-Type": "application/x-ndjson"}


def _lines(items: list[dict]) -> bytes:
    return "".join(json.dumps(i) + "\n" for i in items).encode()


@pytest.fixture
def writer(client: TestClient) -> dict[str, str]:
    return api_key(client, "submissions:write", name="writer")


@pytest.fixture
def bench(client: TestClient) -> dict:
    return benchmark(client, name="lines", max_submissions_per_day=20)


def _post(client: TestClient, bench: dict, headers: dict, body: bytes, **params: Any) -> Any:
    return client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        content=body,
        params=params,
        headers={**headers, **NDJSON, **params.pop("extra_headers", {})},
    )


def _errors(r: Any) -> list[tuple]:
    assert r.status_code == 422, r.text
    return [(tuple(e["loc"]), e["type"]) for e in r.json()["errors"]]


def test_the_same_predictions_score_the_same_as_the_json_body(client: TestClient, bench: dict, writer: dict) -> None:
    preds = film_predictions(6, 2)["items"]
    meta = {"note": "lines", "seed": 3}
    as_lines = _post(client, bench, writer, _lines(preds) + b"\n\n", model="m", metadata=json.dumps(meta))
    assert as_lines.status_code == 201, as_lines.text
    body = {"model": "m", "predictions": {"items": preds}, "metadata": meta}
    as_json = client.post(f"/v1/benchmarks/{bench['id']}/submissions", json=body, headers=writer)
    assert as_json.status_code == 201, as_json.text
    a, b = as_lines.json(), as_json.json()
    assert a["scores"] == b["scores"] and a["metadata"] == b["metadata"] == meta and a["model"] == "m"
    assert a["scores"]["accuracy"]["value"] == pytest.approx(0.6)  # 6 of the 10 public items right
    items = [client.get(f"/v1/submissions/{s['id']}/items", headers=writer).json()["items"] for s in (a, b)]
    assert items[0] == items[1] and len(items[0]) == 10


def test_crlf_lines_and_no_final_newline_are_read(client: TestClient, bench: dict, writer: dict) -> None:
    preds = film_predictions(10)["items"]
    body = "\r\n".join(json.dumps(i) for i in preds).encode()
    r = _post(client, bench, writer, body, model="crlf")
    assert r.status_code == 201, r.text
    assert r.json()["scores"]["accuracy"]["value"] == 1.0


def test_a_bad_line_is_named_by_its_number_and_nothing_is_stored(client: TestClient, bench: dict, writer: dict) -> None:
    preds = film_predictions(6)["items"]
    lines = [json.dumps(i) for i in preds]
    base = f"/v1/benchmarks/{bench['id']}/submissions"

    def sent(*changed: tuple[int, str]) -> bytes:
        out = list(lines)
        for n, text in changed:
            out[n - 1] = text
        return ("\n".join(out) + "\n").encode()

    unclosed = sent((3, '{"item_id": "q2", "choice_idx": 1'))
    assert _errors(_post(client, bench, writer, unclosed, model="m")) == [(("body", 3), "json_invalid")]
    assert _errors(_post(client, bench, writer, sent((4, "[1, 2]")), model="m")) == [(("body", 4), "dict_type")]
    wrong_field = sent((5, '{"item_id": "q4", "choice_idx": "two"}'))
    assert _errors(_post(client, bench, writer, wrong_field, model="m")) == [(("body", 5, "choice_idx"), "int_type")]
    gap = ("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n").encode()
    assert _errors(_post(client, bench, writer, gap, model="m")) == [(("body", 3), "missing")]
    twice = sent((7, lines[0]))
    assert [loc for loc, _ in _errors(_post(client, bench, writer, twice, model="m"))] == [("body", 7, "item_id")]
    nul = sent((2, '{"item_id": "q1\\u0000", "choice_idx": 1}'))
    refused = _errors(_post(client, bench, writer, nul, model="m"))
    assert refused == [(("body", 2, "item_id"), "string_invalid_character")]
    assert client.get(base, headers=writer).json()["items"] == []


def test_model_and_metadata_in_the_query_are_validated_as_in_the_json_body(
    client: TestClient, bench: dict, writer: dict
) -> None:
    body = _lines(film_predictions(5)["items"])
    assert _errors(_post(client, bench, writer, body)) == [(("query", "model"), "missing")]
    assert _errors(_post(client, bench, writer, body, model="x" * 129))[0][0] == ("query", "model")
    for text, kind in (("[1]", "dict_type"), ("{", "json_invalid")):
        assert _errors(_post(client, bench, writer, body, model="m", metadata=text)) == [(("query", "metadata"), kind)]
    big = json.dumps({"a": "x" * 16400})
    assert _errors(_post(client, bench, writer, body, model="m", metadata=big))[0][0] == ("query", "metadata")
    # exactly as in the JSON body: at most 16 KiB of compact JSON
    escapes = json.dumps({"a": "\u00e9" * 8000}, ensure_ascii=False)
    assert len(escapes) < 16 * 1024 < len(json.dumps({"a": "\u00e9" * 8000}))
    made = _post(client, bench, writer, body, model="m", metadata=escapes)
    assert made.status_code == 422 and made.json()["errors"][0]["loc"] == ["body", "metadata"]
    as_json = {"model": "m", "predictions": {"items": film_predictions(5)["items"]}, "metadata": json.loads(escapes)}
    r = client.post(f"/v1/benchmarks/{bench['id']}/submissions", json=as_json, headers=writer)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "metadata"]
    r = client.post(f"/v1/benchmarks/{bench['id']}/submissions", params={"model": "m"}, json=as_json, headers=writer)
    assert _errors(r) == [(("query", "model"), "extra_forbidden")]


def test_the_line_count_is_bounded_before_parsing(client: TestClient, bench: dict, writer: dict) -> None:
    too_many = b"x\n" * (MAX_JSON_ARRAY + 1)  # not JSON: refused on the count, before any line is parsed
    assert _errors(_post(client, bench, writer, too_many, model="m")) == [(("body",), "too_long")]
    wide = ('{"item_id": "q0", "choice_idx": 1, "extra": [' + ",".join(["0"] * 40000) + "]}\n").encode()
    assert _errors(_post(client, bench, writer, wide, model="m")) == [(("body", 1), "too_many_values")]


def test_idempotency_key_replays_a_lines_submission(client: TestClient, bench: dict, writer: dict) -> None:
    body = _lines(film_predictions(4)["items"])
    key = {"extra_headers": {"Idempotency-Key": "lines-1"}}
    first = _post(client, bench, writer, body, model="m", **dict(key))
    again = _post(client, bench, writer, body, model="m", **dict(key))
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json()["id"] == first.json()["id"]
    as_json = {"model": "m", "predictions": film_predictions(4), "metadata": {}}
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    replayed = client.post(url, json=as_json, headers={**writer, "Idempotency-Key": "lines-1"})
    assert replayed.headers.get("Idempotent-Replayed") == "true" and replayed.json()["id"] == first.json()["id"]
    other = _post(client, bench, writer, _lines(film_predictions(5)["items"]), model="m", **dict(key))
    assert _errors(other) == [(("header", "Idempotency-Key"), "idempotency")]
    listed = client.get(f"/v1/benchmarks/{bench['id']}/submissions", headers=writer).json()["items"]
    assert [s["id"] for s in listed] == [first.json()["id"]]


def test_other_media_types_are_still_refused(client: TestClient, bench: dict, writer: dict) -> None:
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        content=_lines(film_predictions(4)["items"]),
        params={"model": "m"},
        headers={**writer, "Content-Type": "text/plain"},
    )
    assert r.status_code == 415
    r = client.post("/v1/api-keys", content=b"{}\n", headers={**writer, **NDJSON})
    assert r.status_code == 415


@pytest.mark.slow
def test_openapi_documents_the_lines_body(client: TestClient) -> None:
    op = client.get("/openapi.json").json()["paths"]["/v1/benchmarks/{benchmark_id}/submissions"]["post"]
    content = op["requestBody"]["content"]
    assert set(content) == {"application/json", "application/x-ndjson"}
    assert {p["name"].lower() for p in op["parameters"]} >= {"model", "metadata", "idempotency-key"}
