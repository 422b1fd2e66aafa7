"""RFC 9457 problem details for every error status: the one place where use-case errors, domain errors and
request validation become ``application/problem+json`` bodies, and where their OpenAPI entries come from. The body
itself (``Problem``) is ``usecases.problems``'s, which a failed job stores too; routes, handlers and middleware
answer through ``problem_response`` (Starlette) or ``send_problem`` (raw ASGI)."""

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Send

from service.errors import DomainError
from usecases.errors import InvalidFields, QuotaExceeded, Unauthorized, Unavailable, UseCaseError
from usecases.problems import Problem as Problem
from usecases.problems import problem

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("estibench.api")
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError, DisconnectionError, PoolTimeout)
"""Database errors that mean "not reachable now" (connection refused or lost, pool exhausted, locked, not
migrated): 503 with ``Retry-After`` on every route."""
DATABASE_RETRY_AFTER_S = 5


class ApiError(Exception):
    """An error of the HTTP layer itself (an unreadable upload body), with a problem body."""

    def __init__(self, status: int, detail: str, *, errors: Sequence[dict[str, Any]] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = list(errors) if errors is not None else None


_DESCRIPTIONS = {
    400: "Undecodable or malformed body.",
    408: "The body did not arrive within the upload timeout.",
    413: "Body too large.",
    415: "Unsupported content type.",
    422: "Invalid input: schema or domain (ranges, NaN, shapes, cost caps); see `errors`.",
    429: "Too many requests; see Retry-After.",
    500: "Internal error; the body carries the request id.",
    503: "Service unavailable (database unreachable).",
}


def responses(*errors: int | type[UseCaseError]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries documenting problem bodies: a use-case error class documents itself (its
    status and docstring); a bare status (HTTP-level errors) takes the standard description."""
    out: dict[int | str, dict[str, Any]] = {}
    for e in errors:
        status = e if isinstance(e, int) else e.status
        description = _DESCRIPTIONS[e] if isinstance(e, int) else " ".join((e.__doc__ or "").split())
        if status in out:
            description = f"{out[status]['description']} Or: {description}"
        out[status] = {
            "description": description,
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    return out


COMMON = (400, 413, 415, 422, 429, 500)


def problem_response(
    request: Request,
    status: int,
    detail: str | None,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The problem answer of a route or an exception handler (the request id as ``instance``)."""
    body = problem(status, detail, errors=errors, instance=getattr(request.state, "request_id", None))
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=status, headers=headers, media_type=PROBLEM_MEDIA_TYPE
    )


def problem_bytes(
    status: int, detail: str, *, instance: str | None, errors: Sequence[dict[str, Any]] | None = None
) -> bytes:
    """The problem body as the bytes an ASGI middleware sends."""
    return problem(status, detail, errors=errors, instance=instance).model_dump_json(exclude_none=True).encode()


def problem_headers(body: bytes, extra: Iterable[tuple[bytes, bytes]] = ()) -> list[tuple[bytes, bytes]]:
    """The raw headers of a problem answer of ``body``: its media type, its length, then ``extra``."""
    return [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode()), *extra]


async def send_problem(
    send: Send,
    status: int,
    detail: str,
    *,
    instance: str | None,
    errors: Sequence[dict[str, Any]] | None = None,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Answer with a problem from an ASGI middleware (before any route runs)."""
    body = problem_bytes(status, detail, instance=instance, errors=errors)
    await send({"type": "http.response.start", "status": status, "headers": problem_headers(body, headers)})
    await send({"type": "http.response.body", "body": body})


def _error_items(errors: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
            "msg": str(e.get("msg", "")),
            "type": str(e.get("type", "value_error")),
        }
        for e in errors
    ]


def domain_error_items(exc: DomainError, prefix: Sequence[str | int] = ("body",)) -> list[dict[str, Any]]:
    return [{"loc": [*prefix, *exc.loc], "msg": exc.msg, "type": exc.type}]


def allowed_methods(request: Request) -> str:
    """``Allow`` for a 405: the methods of the most specific documented routes matching the path (Starlette
    would list only the first partial match's methods)."""
    matched: list[tuple[int, set[str]]] = []
    for route in request.app.router.routes:
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        match, _ = route.matches(request.scope)
        if match != Match.NONE:
            matched.append((len(route.param_convertors), set(route.methods or ())))
    if not matched:
        return ""
    fewest = min(n for n, _ in matched)
    return ", ".join(sorted(set().union(*(m for n, m in matched if n == fewest))))


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into a problem body."""

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        items = _error_items(exc.errors())
        if any(i["type"] == "json_invalid" for i in items):
            return problem_response(request, 400, "The body is not valid JSON.", errors=items)
        return problem_response(request, 422, "The request failed validation.", errors=items)

    @app.exception_handler(DomainError)
    async def _domain(request: Request, exc: DomainError) -> JSONResponse:
        return problem_response(request, 422, exc.msg, errors=domain_error_items(exc))

    @app.exception_handler(UseCaseError)
    async def _use_case(request: Request, exc: UseCaseError) -> JSONResponse:
        headers: dict[str, str] = {}
        if isinstance(exc, Unauthorized):
            headers["WWW-Authenticate"] = "Bearer"
        elif isinstance(exc, QuotaExceeded | Unavailable) and exc.retry_after_s is not None:
            headers["Retry-After"] = str(exc.retry_after_s)
        errors = exc.errors if isinstance(exc, InvalidFields) else None
        return problem_response(request, exc.status, exc.detail, errors=errors, headers=headers)

    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        return problem_response(request, exc.status, exc.detail, errors=exc.errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else None
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return problem_response(request, exc.status_code, detail, headers=headers)

    async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.warning(
            "database unavailable", extra={"request_id": getattr(request.state, "request_id", None), **_db_fields(exc)}
        )
        return problem_response(
            request,
            503,
            "The database is unavailable; retry shortly.",
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
        )

    for cls in DATABASE_UNAVAILABLE:
        app.add_exception_handler(cls, _database_unavailable)

    @app.exception_handler(Exception)
    async def _unhandled(request: Request, exc: Exception) -> JSONResponse:
        request_id = getattr(request.state, "request_id", None)
        if isinstance(exc, DBAPIError):
            log.error("database error", extra={"request_id": request_id, **_db_fields(exc)})
        else:
            log.exception("unhandled error", extra={"request_id": request_id})
        return problem_response(request, 500, "Internal error; quote the request id when reporting it.")


def _db_fields(exc: Exception) -> dict[str, str]:
    """What a log may say about a database error: the driver's error class and the SQL text, never the message
    (PostgreSQL's DETAIL quotes row values) nor the parameters."""
    if not isinstance(exc, DBAPIError):
        return {"error": type(exc).__name__}
    return {"error": type(exc.orig).__name__, "sql": (exc.statement or "")[:500]}
