"""``Idempotency-Key`` records: claim a key, store the response, replay it (draft-ietf-httpapi-idempotency-key)."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.exc import IntegrityError

from db.models import IdempotencyRecord


@dataclass(frozen=True)
class IdemRow:
    request_sha256: str
    status_code: int | None
    response: str | None
    created_at: datetime


def claim(conn: Connection, scope: str, key: str, request_sha256: str, when: datetime) -> IdemRow | None:
    """Insert an in-flight record; returns None on success, else the existing record."""
    try:
        with conn.begin_nested():
            conn.execute(
                IdempotencyRecord.__table__.insert().values(
                    scope=scope, idem_key=key, request_sha256=request_sha256, created_at=when
                )
            )
        return None
    except IntegrityError:
        r = conn.execute(
            select(
                IdempotencyRecord.request_sha256,
                IdempotencyRecord.status_code,
                IdempotencyRecord.response,
                IdempotencyRecord.created_at,
            ).where(IdempotencyRecord.scope == scope, IdempotencyRecord.idem_key == key)
        ).first()
        return IdemRow(*r) if r else None


def complete(conn: Connection, scope: str, key: str, status_code: int, response: str) -> None:
    conn.execute(
        update(IdempotencyRecord)
        .where(IdempotencyRecord.scope == scope, IdempotencyRecord.idem_key == key)
        .values(status_code=status_code, response=response)
    )


def release(conn: Connection, scope: str, key: str) -> None:
    """Drop an in-flight claim (the request failed, so the key may be retried)."""
    conn.execute(
        delete(IdempotencyRecord).where(
            IdempotencyRecord.scope == scope,
            IdempotencyRecord.idem_key == key,
            IdempotencyRecord.status_code.is_(None),
        )
    )


def take_over(conn: Connection, scope: str, key: str, request_sha256: str, older_than: datetime, now: datetime) -> bool:
    """Re-claim an in-flight record abandoned before ``older_than`` (its request died); True if taken."""
    res = conn.execute(
        update(IdempotencyRecord)
        .where(
            IdempotencyRecord.scope == scope,
            IdempotencyRecord.idem_key == key,
            IdempotencyRecord.status_code.is_(None),
            IdempotencyRecord.created_at < older_than,
        )
        .values(request_sha256=request_sha256, created_at=now)
    )
    return res.rowcount > 0
