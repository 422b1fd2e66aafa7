"""usecases/problems.py: the RFC 9457 body of a status: ``type`` about:blank, the status's reason phrase as
``title`` (RFC 9110), ``errors`` only where given, and absent members left out of the JSON text."""

import json

from usecases.problems import ErrorItem, Problem, problem, problem_json

UNPROCESSABLE = {"Unprocessable Entity", "Unprocessable Content"}
"""422's reason phrase: RFC 4918's, or RFC 9110's from Python 3.13 on."""


def test_a_problem_is_titled_with_the_reason_phrase_of_its_status() -> None:
    assert problem(404, "no such run") == Problem(
        type="about:blank", title="Not Found", status=404, detail="no such run", instance=None, errors=None
    )
    assert problem(503, None).title == "Service Unavailable"
    assert problem(429, "slow down").title == "Too Many Requests"


def test_a_problem_carries_its_field_errors_and_instance() -> None:
    body = problem(422, "invalid input", errors=[{"loc": ["body", "items", 3], "msg": "bad", "type": "value_error"}])
    assert body.title in UNPROCESSABLE and body.status == 422
    assert body.errors == [ErrorItem(loc=["body", "items", 3], msg="bad", type="value_error")]
    assert problem(500, "internal error", instance="req-7").instance == "req-7"


def test_the_json_text_leaves_absent_members_out() -> None:
    assert json.loads(problem_json(404, "gone")) == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": "gone",
    }
    assert json.loads(problem_json(500, None, instance="req-1")) == {
        "type": "about:blank",
        "title": "Internal Server Error",
        "status": 500,
        "instance": "req-1",
    }


def test_given_errors_are_kept_even_when_empty() -> None:
    text = json.loads(problem_json(422, "invalid", []))
    assert text.pop("title") in UNPROCESSABLE
    assert text == {"type": "about:blank", "status": 422, "detail": "invalid", "errors": []}
    assert json.loads(problem_json(400, "bad", [{"loc": ["body"], "msg": "m", "type": "json_invalid"}]))["errors"] == [
        {"loc": ["body"], "msg": "m", "type": "json_invalid"}
    ]
