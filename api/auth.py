"""Credentials from request headers (``Authorization: Bearer <key>`` or ``X-API-Key: <key>``) and the callers a
route admits, as ``Annotated`` aliases that carry their scope: a route's signature says who may call it.

A credential that is present but invalid (unknown, revoked, malformed, or another scheme such as Basic) is a 401
on every route, including those open to anonymous callers; the key lookup itself is ``usecases.api_keys``. Every
alias builds on one authenticator (``optional_principal``, run once per request) and one scope rule
(``usecases.api_keys.require``: 401 without a key, 403 without the scope; ``admin`` holds every scope).
"""

from collections.abc import Awaitable, Callable
from typing import Annotated

import anyio
from fastapi import Depends, Request

from api.deps import ServicesDep
from usecases.api_keys import Principal, authenticate, require, require_for_runs, require_key
from usecases.errors import Unauthorized
from usecases.services import Services

SCHEME_HINT = "use 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"


def presented_token(authorization: str | None, x_api_key: str | None) -> str | None:
    """The token the caller presents, None without one; an ``Authorization`` header that is not a non-empty
    Bearer token is ``Unauthorized``."""
    if authorization is not None:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthorized(SCHEME_HINT)
        return value.strip()
    if x_api_key is not None:
        if not x_api_key.strip():
            raise Unauthorized(SCHEME_HINT)
        return x_api_key.strip()
    return None


async def principal_of(services: Services, token: str | None) -> Principal | None:
    """Authenticate ``token``: no database work without one, else the key lookup in a worker thread."""
    if token is None:
        return None
    return await anyio.to_thread.run_sync(authenticate, services, token)


async def optional_principal(request: Request, services: ServicesDep) -> Principal | None:
    """The caller's key, or None without one (a present but invalid credential is a 401)."""
    token = presented_token(request.headers.get("authorization"), request.headers.get("x-api-key"))
    return await principal_of(services, token)


OptionalCaller = Annotated[Principal | None, Depends(optional_principal)]
"""Anonymous callers allowed (an invalid credential is still a 401)."""
CHECK_CREDENTIALS = Depends(optional_principal)
"""For routes that need no caller: a present credential must still be valid (FastAPI runs it once per request)."""


def caller_with(scope: str) -> Callable[[Principal | None], Awaitable[Principal]]:
    """A dependency admitting a key that holds ``scope`` (401 without a key, 403 without the scope)."""

    async def scoped_principal(principal: OptionalCaller) -> Principal:
        return require(principal, scope)

    scoped_principal.__name__ = "caller_with_" + scope.replace(":", "_")
    return scoped_principal


async def any_key(principal: OptionalCaller) -> Principal:
    """A dependency admitting any valid key (401 without one); what the key may see is the use case's."""
    return require_key(principal)


async def run_principal(principal: OptionalCaller, services: ServicesDep) -> Principal | None:
    """The caller of a run: anyone by default; with ``REQUIRE_KEYS`` a key with ``estimators:run``."""
    return require_for_runs(services, principal)


Admin = Annotated[Principal, Depends(caller_with("admin"))]
"""An admin key (API keys, re-scoring, reproduction checks)."""
BenchmarksWrite = Annotated[Principal, Depends(caller_with("benchmarks:write"))]
"""A key with ``benchmarks:write`` (registering benchmarks and answer keys; ownership is the use case's)."""
SubmissionsWrite = Annotated[Principal, Depends(caller_with("submissions:write"))]
"""A key with ``submissions:write`` (submitting, listing, reading and withdrawing one's own submissions)."""
AnyKey = Annotated[Principal, Depends(any_key)]
"""Any key (a benchmark's owners, participants and submitters; what it may see or change is the use case's)."""
RunCaller = Annotated[Principal | None, Depends(run_principal)]
"""Whoever may make runs and upload their arrays (``REQUIRE_KEYS``: a key with ``estimators:run``)."""
