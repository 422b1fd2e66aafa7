"""API keys: ``ek_<prefix>_<secret>`` tokens stored as HMAC-SHA256, scoped and revocable; authentication of a
presented token and the scope rules. The ``admin`` scope implies every other scope."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from db.repositories import api_keys as repo
from db.repositories.api_keys import ApiKeyRow
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

if TYPE_CHECKING:
    from usecases.services import Services

SCOPES = ("estimators:run", "benchmarks:write", "submissions:write", "admin")
BOOTSTRAP_ADMIN_ID = "00000000-0000-0000-0000-000000000001"
MAX_TOKEN_LENGTH = 256


@dataclass(frozen=True)
class Principal:
    """The caller: the key's id, name and scopes."""

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


def authenticate(services: Services, token: str | None) -> Principal | None:
    """The principal of a presented token, None when no token was presented; an unknown, revoked or over-long
    token is ``Unauthorized`` (a present but invalid credential never falls back to anonymous)."""
    if token is None:
        return None
    if len(token) > MAX_TOKEN_LENGTH:
        raise Unauthorized("invalid API key")
    with services.engines.read.connect() as conn:
        row = repo.by_hash(conn, hash_key(services.secret_key, token))
    if row is None or row.revoked_at is not None:
        raise Unauthorized("invalid or revoked API key")
    return Principal(row.id, row.name, frozenset(row.scopes))


def require(principal: Principal | None, scope: str) -> Principal:
    """``principal`` if it holds ``scope``: ``Unauthorized`` without a key, ``Forbidden`` without the scope."""
    if principal is None:
        raise Unauthorized(f"an API key with scope {scope!r} is required")
    if not principal.has(scope):
        raise Forbidden(f"this key lacks the scope {scope!r}")
    return principal


def require_for_runs(services: Services, principal: Principal | None) -> Principal | None:
    """Estimator and scorer runs are open by default; with ``REQUIRE_KEYS`` they need ``estimators:run``."""
    return require(principal, "estimators:run") if services.settings.require_keys else principal


def ensure_bootstrap_admin(services: Services) -> None:
    """Store ``ESTIBENCH_ADMIN_KEY`` as an admin key (idempotent, safe across processes)."""
    admin_key = services.settings.admin_key
    if not admin_key:
        return
    row = ApiKeyRow(BOOTSTRAP_ADMIN_ID, "bootstrap", "bootstrap admin", ["admin"], datetime.now(UTC), None, None)
    with services.engines.write.begin() as conn:
        if repo.get(conn, BOOTSTRAP_ADMIN_ID) is None:
            repo.insert(conn, row, hash_key(services.secret_key, admin_key))


def create_key(services: Services, admin: Principal, name: str, scopes: list[str]) -> tuple[ApiKeyRow, str]:
    """A new key with ``scopes``; returns the row and the token (shown once, never stored)."""
    require(admin, "admin")
    token, prefix = new_token()
    row = ApiKeyRow(str(uuid.uuid4()), prefix, name, sorted(set(scopes)), datetime.now(UTC), None, admin.key_id)
    with services.engines.write.begin() as conn:
        if not repo.insert(conn, row, hash_key(services.secret_key, token)):
            raise Conflict("key collision; retry")
    return row, token


def list_keys(services: Services, admin: Principal) -> list[ApiKeyRow]:
    require(admin, "admin")
    with services.engines.read.connect() as conn:
        return repo.list_all(conn)


def revoke_key(services: Services, admin: Principal, key_id: str) -> ApiKeyRow:
    """Revoke a key; revoking twice keeps the first revocation time."""
    require(admin, "admin")
    with services.engines.write.begin() as conn:
        repo.revoke(conn, key_id, datetime.now(UTC))
        row = repo.get(conn, key_id)
    if row is None:
        raise NotFound(f"no API key {key_id!r}")
    return row
