"""One problem body: the problems built by raw ASGI middleware (415, 413, the text guard's 422), by exception
handlers (404, 422) and stored on a failed job have the same members, and one status has one title whichever
code answers it (RFC 9457 members; the titles are Python 3.11's reason phrases)."""

import json

from fastapi.testclient import TestClient

from usecases.problems import problem_json

URL = "/v1/estimators/minhash.variance"
JSON = {"content-type": "application/json"}
TITLES = {404: "Not Found", 413: "Request Entity Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Entity"}


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    return response.json()


def test_middleware_and_handlers_answer_the_same_body(client: TestClient) -> None:
    rid = {"x-request-id": "req-1"}
    answers = {
        "415 middleware": _problem(client.post(URL, content=b"{}", headers={"content-type": "text/plain", **rid}), 415),
        "413 middleware": _problem(
            client.post(URL, content=b'{"x":"' + b"a" * (9 * 1024 * 1024) + b'"}', headers={**JSON, **rid}), 413
        ),
        "422 text guard": _problem(client.post(URL, content=b'{"a":"\\u0000"}', headers={**JSON, **rid}), 422),
        "422 handler": _problem(client.post(URL, content=b'{"num_perm":"x"}', headers={**JSON, **rid}), 422),
        "404 handler": _problem(client.get("/v1/runs/none", headers=rid), 404),
    }
    for name, body in answers.items():
        status = body["status"]
        assert body["type"] == "about:blank" and body["title"] == TITLES[status], name
        assert set(body) - {"errors", "instance"} == {"type", "title", "status", "detail"}, name
        assert isinstance(body["detail"], str) and body["detail"], name
    assert answers["422 text guard"]["errors"][0]["loc"] == ["body", "a"]
    assert (
        set(answers["422 text guard"]["errors"][0])
        == set(answers["422 handler"]["errors"][0])
        == {
            "loc",
            "msg",
            "type",
        }
    )


def test_a_failed_job_stores_the_same_shape() -> None:
    errors = [{"loc": ["params", "k"], "msg": "too big", "type": "value_error"}]
    assert json.loads(problem_json(422, "the params failed validation", errors)) == {
        "type": "about:blank",
        "title": "Unprocessable Entity",
        "status": 422,
        "detail": "the params failed validation",
        "errors": errors,
    }
    assert json.loads(problem_json(504, "the job exceeded its timeout of 2 s")) == {
        "type": "about:blank",
        "title": "Gateway Timeout",
        "status": 504,
        "detail": "the job exceeded its timeout of 2 s",
    }
