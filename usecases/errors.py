"""Errors the use cases raise, named for what went wrong. Each carries the HTTP status it stands for (``status``);
``api/problems.py`` turns every one into a problem body in one handler and documents it from the class docstring."""

from collections.abc import Sequence
from typing import Any


class UseCaseError(Exception):
    """Base class: ``detail`` says what went wrong, for the caller."""

    status = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Unauthorized(UseCaseError):
    """No API key where one is required, or a key that is unknown, revoked or malformed."""

    status = 401


class Forbidden(UseCaseError):
    """The key lacks a scope, or does not own the resource."""

    status = 403


class NotFound(UseCaseError):
    """No such resource (or not one the caller may see)."""

    status = 404


class Conflict(UseCaseError):
    """Taken name, finished job, or an idempotent request still in flight."""

    status = 409


class QuotaExceeded(UseCaseError):
    """A daily submission quota or the per-caller job cap is used up; retry after ``retry_after_s`` seconds."""

    status = 429

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class Unavailable(UseCaseError):
    """No job queue is configured, or it is unreachable, or the server is busy (retry after ``retry_after_s``)."""

    status = 503

    def __init__(self, detail: str, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class InvalidFields(UseCaseError):
    """Input that failed validation. ``errors`` are ``{loc, msg, type}`` with ``loc`` from the request root
    (``body``, ``query``, ``header``); ``malformed`` input is not even parseable (undecodable JSON: 400)."""

    status = 422

    def __init__(self, detail: str, errors: Sequence[dict[str, Any]], *, malformed: bool = False) -> None:
        super().__init__(detail)
        self.errors = list(errors)
        if malformed:
            self.status = 400


def invalid(detail: str, loc: Sequence[str | int], type_: str, msg: str | None = None) -> InvalidFields:
    """One-field ``InvalidFields``."""
    return InvalidFields(detail, [{"loc": list(loc), "msg": msg or detail, "type": type_}])
