"""Credentials from request headers: ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``.

A credential that is present but invalid (unknown, revoked, malformed, or another scheme such as Basic) is a 401
on every route, including those open to anonymous callers; the key lookup itself is ``usecases.api_keys``.
"""

from typing import Annotated

import anyio
from fastapi import Depends, Request

from api.deps import ServicesDep
from usecases.api_keys import Principal, authenticate
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


async def required_principal(principal: Annotated[Principal | None, Depends(optional_principal)]) -> Principal:
    """The caller's key; 401 without one. Scopes are checked by the use case."""
    if principal is None:
        raise Unauthorized("an API key is required")
    return principal


OptionalCaller = Annotated[Principal | None, Depends(optional_principal)]
"""Anonymous callers allowed (an invalid credential is still a 401)."""
KeyHolder = Annotated[Principal, Depends(required_principal)]
"""A valid API key is required; the use case checks its scope and ownership."""
CHECK_CREDENTIALS = Depends(optional_principal)
"""For routes that need no caller: a present credential must still be valid (FastAPI runs it once per request)."""
