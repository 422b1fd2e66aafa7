"""The per-benchmark audit log (``audit_entry``): appended in the caller's transaction, read newest first."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, select

from db.models import AuditEntry


@dataclass(frozen=True)
class AuditRow:
    seq: int
    benchmark_id: str
    action: str
    actor_key_id: str | None
    subject: str | None
    details: str
    created_at: datetime


_COLUMNS = [getattr(AuditEntry, f) for f in AuditRow.__dataclass_fields__]


def append(
    conn: Connection,
    benchmark_id: str,
    action: str,
    actor_key_id: str | None,
    subject: str | None,
    details: str,
    when: datetime,
) -> None:
    conn.execute(
        AuditEntry.__table__.insert().values(
            benchmark_id=benchmark_id,
            action=action,
            actor_key_id=actor_key_id,
            subject=subject,
            details=details,
            created_at=when,
        )
    )


def page(conn: Connection, benchmark_id: str, limit: int, before_seq: int | None) -> list[AuditRow]:
    """A benchmark's entries, newest first, before ``before_seq``."""
    stmt = select(*_COLUMNS).where(AuditEntry.benchmark_id == benchmark_id).order_by(AuditEntry.seq.desc()).limit(limit)
    if before_seq is not None:
        stmt = stmt.where(AuditEntry.seq < before_seq)
    return [AuditRow(*r) for r in conn.execute(stmt)]
