"""API keys: ``ek_<prefix>_<secret>`` tokens stored as HMAC-SHA256, scoped and revocable; authentication of a
presented token and the scope rules. The ``admin`` scope implies every other scope."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from db import locks
from db.repositories import api_keys as repo
from db.repositories.api_keys import ApiKeyRow
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

if TYPE_CHECKING:
    from usecases.services import Services

log = logging.getLogger("estibench.keys")
SCOPES = ("estimators:run", "benchmarks:write", "submissions:write", "admin")
MAX_TOKEN_LENGTH = 256


@dataclass(frozen=True)
class Principal:
    """The caller: the key's id, name and scopes, and for a participant's key the one benchmark it is bound to."""

    key_id: str
    name: str
    scopes: frozenset[str]
    benchmark_id: str | None = None

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
    return Principal(row.id, row.name, frozenset(row.scopes), row.benchmark_id)


def require(principal: Principal | None, scope: str) -> Principal:
    """``principal`` if it holds ``scope``: ``Unauthorized`` without a key, ``Forbidden`` without the scope."""
    if principal is None:
        raise Unauthorized(f"an API key with scope {scope!r} is required")
    if not principal.has(scope):
        raise Forbidden(f"this key lacks the scope {scope!r}")
    return principal


def require_key(principal: Principal | None) -> Principal:
    """``principal``, or ``Unauthorized`` without a key (routes open to every key; the use case decides what it
    may see)."""
    if principal is None:
        raise Unauthorized("an API key is required")
    return principal


def require_for_runs(services: Services, principal: Principal | None) -> Principal | None:
    """Estimator and scorer runs are open by default; with ``REQUIRE_KEYS`` they need ``estimators:run``."""
    return require(principal, "estimators:run") if services.settings.require_keys else principal


def _announce_to_terminal(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


GENERATED_NOTICE = """
estibench: no admin key is configured (ESTIBENCH_ADMIN_KEY) and none exists, so this one was created.
It is shown only now; the server keeps only its hash:

    {token}

Use it as 'Authorization: Bearer <key>' (or ESTIBENCH_KEY for the client). To rotate it, either restart with
ESTIBENCH_ADMIN_KEY=<a new secret> (the configured key replaces and revokes this one), or create another admin key
with POST /v1/api-keys and revoke this one (id {key_id}) with DELETE /v1/api-keys/{key_id}.

"""


def ensure_bootstrap_admin(services: Services, announce: Callable[[str], None] = _announce_to_terminal) -> str:
    """Make sure an admin key exists at start; returns what was done.

    With ``ESTIBENCH_ADMIN_KEY`` configured, that value is the bootstrap admin key at every start: stored (as its
    hash) if new, reinstated if it had been revoked, and every other key the server made at start is revoked, so a
    changed value replaces the previous bootstrap key ("created", "replaced", "reinstated" or "kept"). Without one,
    when no unrevoked admin key exists, a key is generated, stored as its hash and passed once to ``announce`` (the
    terminal) with how to rotate it ("generated"; else "none"). The log says what happened, never a key. One
    transaction under a named lock, so processes starting together agree."""
    configured = services.settings.admin_key
    now = datetime.now(UTC)
    with services.engines.write.begin() as conn:
        locks.serialize_on(conn, "bootstrap-admin")
        if not configured:
            if any(r.revoked_at is None and "admin" in r.scopes for r in repo.list_all(conn)):
                return "none"
            token, prefix = new_token()
            row = ApiKeyRow(str(uuid.uuid4()), prefix, "bootstrap admin (generated)", ["admin"], now, None, None)
            repo.insert(conn, row, hash_key(services.secret_key, token))
            log.warning("generated the bootstrap admin key %s; it is printed once on the terminal", row.id)
            announce(GENERATED_NOTICE.format(token=token, key_id=row.id))
            return "generated"
        key_hash = hash_key(services.secret_key, configured)
        current = repo.by_hash(conn, key_hash)
        action = "kept"
        if current is None:
            prefix = f"bootstrap-{secrets.token_hex(3)}"
            current = ApiKeyRow(str(uuid.uuid4()), prefix, "bootstrap admin", ["admin"], now, None, None)
            repo.insert(conn, current, key_hash)
            action = "created"
        elif current.revoked_at is not None:
            repo.reinstate(conn, current.id)
            action = "reinstated"
        replaced = [r.id for r in repo.active_server_made(conn) if r.id != current.id]
        for key_id in replaced:
            repo.revoke(conn, key_id, now)
    if replaced:
        log.warning(
            "ESTIBENCH_ADMIN_KEY changed: bootstrap admin key %s is active, the previous one (%s) is revoked",
            current.id,
            ", ".join(replaced),
        )
        return "replaced" if action == "created" else action
    if action == "reinstated":
        log.warning(
            "the bootstrap admin key %s had been revoked; ESTIBENCH_ADMIN_KEY holds it, so it works again", current.id
        )
    elif action == "created":
        log.info("stored ESTIBENCH_ADMIN_KEY as the bootstrap admin key %s", current.id)
    return action


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


def own_key(services: Services, principal: Principal) -> ApiKeyRow:
    """The caller's own key as listed (never its secret)."""
    with services.engines.read.connect() as conn:
        row = repo.get(conn, require_key(principal).key_id)
    if row is None:
        raise NotFound("this key no longer exists")
    return row


def rotate_own(services: Services, principal: Principal) -> tuple[ApiKeyRow, str]:
    """A new secret for the caller's own key (same id, scopes and binding; a new prefix): the old secret is refused
    from the next request on. Returns the row and the new token (shown once, never stored). A bootstrap admin key
    configured with ``ESTIBENCH_ADMIN_KEY`` is replaced again by the configured value at the next start."""
    require_key(principal)
    token, prefix = new_token()
    with services.engines.write.begin() as conn:
        if not repo.rotate(conn, principal.key_id, prefix, hash_key(services.secret_key, token)):
            raise Conflict("the key could not be rotated (revoked meanwhile, or a collision); retry")
        row = repo.get(conn, principal.key_id)
    assert row is not None
    log.info("key %s rotated its secret", row.id)
    return row, token
