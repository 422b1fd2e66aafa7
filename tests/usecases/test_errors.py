"""usecases/errors.py: each use-case error stands for its HTTP status (RFC 9110), keeps its ``detail`` for the
caller, and ``InvalidFields`` carries its per-field errors (400 when the input was not even parseable)."""

from http import HTTPStatus

import pytest

from usecases.errors import (
    Conflict,
    Forbidden,
    InvalidFields,
    NotFound,
    QuotaExceeded,
    Unauthorized,
    Unavailable,
    UseCaseError,
    invalid,
)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UseCaseError, HTTPStatus.INTERNAL_SERVER_ERROR),
        (Unauthorized, HTTPStatus.UNAUTHORIZED),
        (Forbidden, HTTPStatus.FORBIDDEN),
        (NotFound, HTTPStatus.NOT_FOUND),
        (Conflict, HTTPStatus.CONFLICT),
    ],
)
def test_an_error_stands_for_its_status_and_keeps_its_detail(error: type[UseCaseError], status: HTTPStatus) -> None:
    exc = error("what went wrong")
    assert exc.status == status
    assert exc.detail == "what went wrong"
    assert str(exc) == "what went wrong" and exc.args == ("what went wrong",)


def test_a_used_up_quota_is_429_with_its_retry_time() -> None:
    exc = QuotaExceeded("daily quota used up", retry_after_s=3600)
    assert exc.status == HTTPStatus.TOO_MANY_REQUESTS
    assert (exc.detail, str(exc), exc.retry_after_s) == ("daily quota used up", "daily quota used up", 3600)


def test_unavailable_is_503_with_an_optional_retry_time() -> None:
    busy = Unavailable("all slots busy", retry_after_s=2)
    assert busy.status == HTTPStatus.SERVICE_UNAVAILABLE
    assert (busy.detail, str(busy), busy.retry_after_s) == ("all slots busy", "all slots busy", 2)
    assert Unavailable("no job queue").retry_after_s is None


def test_invalid_fields_are_422_and_unparseable_input_400() -> None:
    errors = ({"loc": ["body", "x"], "msg": "bad x", "type": "value_error"},)
    exc = InvalidFields("invalid input", errors)
    assert exc.status == HTTPStatus.UNPROCESSABLE_ENTITY
    assert exc.errors == [{"loc": ["body", "x"], "msg": "bad x", "type": "value_error"}]
    assert isinstance(exc.errors, list)  # a copy as a list, whatever sequence came in
    assert (exc.detail, str(exc)) == ("invalid input", "invalid input")
    malformed = InvalidFields("undecodable JSON", [], malformed=True)
    assert malformed.status == HTTPStatus.BAD_REQUEST and malformed.errors == []
    assert InvalidFields.status == HTTPStatus.UNPROCESSABLE_ENTITY  # the class keeps 422
    assert InvalidFields("again", []).status == HTTPStatus.UNPROCESSABLE_ENTITY


def test_one_invalid_field_names_its_location_and_type_with_the_detail_as_message() -> None:
    exc = invalid("limit must be positive", ("query", "limit"), "greater_than")
    assert exc.status == 422 and exc.detail == "limit must be positive"
    assert exc.errors == [{"loc": ["query", "limit"], "msg": "limit must be positive", "type": "greater_than"}]
    own = invalid("cost too high", ["body", "params", 0], "cost_cap", "cost 5 > hard_cap 4")
    assert own.detail == "cost too high"
    assert own.errors == [{"loc": ["body", "params", 0], "msg": "cost 5 > hard_cap 4", "type": "cost_cap"}]
