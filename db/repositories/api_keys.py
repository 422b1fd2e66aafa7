"""The ``api_key`` table: keys are stored as HMAC-SHA256 hashes and looked up by hash."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, select, update
from sqlalchemy.exc import IntegrityError

from db.models import ApiKey


@dataclass(frozen=True)
class ApiKeyRow:
    id: str
    prefix: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    created_by: str | None
    benchmark_id: str | None = None


_COLUMNS = [getattr(ApiKey, f) for f in ApiKeyRow.__dataclass_fields__]


def by_hash(conn: Connection, key_hash: str) -> ApiKeyRow | None:
    r = conn.execute(select(*_COLUMNS).where(ApiKey.key_hash == key_hash)).first()
    return ApiKeyRow(*r) if r else None


def get(conn: Connection, key_id: str) -> ApiKeyRow | None:
    r = conn.execute(select(*_COLUMNS).where(ApiKey.id == key_id)).first()
    return ApiKeyRow(*r) if r else None


def insert(conn: Connection, row: ApiKeyRow, key_hash: str) -> bool:
    """Insert a key; False when its id, prefix or hash already exists."""
    try:
        with conn.begin_nested():
            conn.execute(ApiKey.__table__.insert().values(key_hash=key_hash, **row.__dict__))
    except IntegrityError:
        return False
    return True


def list_all(conn: Connection) -> list[ApiKeyRow]:
    return [ApiKeyRow(*r) for r in conn.execute(select(*_COLUMNS).order_by(ApiKey.created_at, ApiKey.id))]


def active_server_made(conn: Connection) -> list[ApiKeyRow]:
    """Unrevoked keys the server made itself at start (``created_by`` NULL): the bootstrap admin keys."""
    stmt = select(*_COLUMNS).where(ApiKey.created_by.is_(None), ApiKey.revoked_at.is_(None)).order_by(ApiKey.created_at)
    return [ApiKeyRow(*r) for r in conn.execute(stmt)]


def reinstate(conn: Connection, key_id: str) -> None:
    """Clear ``revoked_at``: the key works again."""
    conn.execute(update(ApiKey).where(ApiKey.id == key_id).values(revoked_at=None))


def revoke(conn: Connection, key_id: str, when: datetime) -> bool:
    """Set ``revoked_at`` (idempotent: an already revoked key keeps its first revocation time)."""
    res = conn.execute(update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)).values(revoked_at=when))
    return res.rowcount > 0


def rotate(conn: Connection, key_id: str, prefix: str, key_hash: str) -> bool:
    """Give an unrevoked key a new prefix and hash (its new secret): the old secret stops matching at once. False
    when the key is revoked or gone, or the new prefix or hash collides."""
    try:
        with conn.begin_nested():
            res = conn.execute(
                update(ApiKey)
                .where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
                .values(prefix=prefix, key_hash=key_hash)
            )
    except IntegrityError:
        return False
    return res.rowcount > 0
