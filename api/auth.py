"""API keys (ARCHITECTURE §3 Auth): ``ek_<prefix>_<secret>`` tokens, stored as HMAC-SHA256, scoped, revocable.

``Authorization: Bearer <key>`` or ``X-API-Key: <key>``. 401 without a valid key where one is required,
403 when a scope (or ownership) is missing. The ``admin`` scope implies every other scope.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

import anyio
from fastapi import Depends, Request

from api.problems import ApiError
from db.engine import Engines
from db.repositories import api_keys as repo
from db.repositories.api_keys import ApiKeyRow

SCOPES = ("estimators:run", "benchmarks:write", "submissions:write", "admin")
BOOTSTRAP_ADMIN_ID = "00000000-0000-0000-0000-000000000001"


@dataclass(frozen=True)
class Principal:
    """The caller: the key's id and scopes."""

    key_id: str
    name: str
    scopes: frozenset[str]

    @property
    def is_admin(self) -> bool:
        return "admin" in self.scopes

    def has(self, scope: str) -> bool:
        return self.is_admin or scope in self.scopes


def hash_key(secret_key: str, token: str) -> str:
    return hmac.new(secret_key.encode(), token.encode(), hashlib.sha256).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh ``(token, prefix)``; the prefix identifies the key in listings without revealing it."""
    prefix = secrets.token_hex(4)
    return f"ek_{prefix}_{secrets.token_urlsafe(30)}", prefix


def ensure_bootstrap_admin(engines: Engines, secret_key: str, admin_key: str | None) -> None:
    """Store ``ESTIBENCH_ADMIN_KEY`` as an admin key (idempotent, safe across processes)."""
    if not admin_key:
        return
    row = ApiKeyRow(BOOTSTRAP_ADMIN_ID, "bootstrap", "bootstrap admin", ["admin"], datetime.now(UTC), None, None)
    with engines.write.begin() as conn:
        if repo.get(conn, BOOTSTRAP_ADMIN_ID) is None:
            repo.insert(conn, row, hash_key(secret_key, admin_key))


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(401, "use 'Authorization: Bearer <key>' or 'X-API-Key: <key>'", headers=_CHALLENGE)
        return value.strip()
    return request.headers.get("x-api-key") or None


_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _lookup(engines: Engines, key_hash: str) -> ApiKeyRow | None:
    with engines.read.connect() as conn:
        return repo.by_hash(conn, key_hash)


async def optional_principal(request: Request) -> Principal | None:
    """The caller's key, or None without one; an unknown or revoked key is a 401 (the lookup runs in a thread)."""
    token = _token(request)
    if token is None:
        return None
    if len(token) > 256:
        raise ApiError(401, "invalid API key", headers=_CHALLENGE)
    key_hash = hash_key(request.app.state.secret_key, token)
    row = await anyio.to_thread.run_sync(_lookup, request.app.state.engines, key_hash)
    if row is None or row.revoked_at is not None:
        raise ApiError(401, "invalid or revoked API key", headers=_CHALLENGE)
    request.state.api_key_id = row.id
    return Principal(row.id, row.name, frozenset(row.scopes))


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]


def require(scope: str):
    """Dependency factory: a principal holding ``scope`` (401 without a key, 403 without the scope)."""

    async def dependency(principal: OptionalPrincipal) -> Principal:
        if principal is None:
            raise ApiError(401, f"an API key with scope {scope!r} is required", headers=_CHALLENGE)
        if not principal.has(scope):
            raise ApiError(403, f"this key lacks the scope {scope!r}")
        return principal

    dependency.__name__ = f"require_{scope.replace(':', '_')}"
    return dependency


async def run_principal(request: Request, principal: OptionalPrincipal) -> Principal | None:
    """Estimator runs: open by default; with ``REQUIRE_KEYS`` a key with ``estimators:run`` is required."""
    if request.app.state.settings.require_keys:
        return await require("estimators:run")(principal)
    return principal


RunPrincipal = Annotated[Principal | None, Depends(run_principal)]
Admin = Annotated[Principal, Depends(require("admin"))]
