"""A benchmark's co-owners (``benchmark_owner``); its creator is ``benchmark.owner_key_id``."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, exists, select
from sqlalchemy.exc import IntegrityError

from db.models import ApiKey, BenchmarkOwner


@dataclass(frozen=True)
class OwnerRow:
    benchmark_id: str
    api_key_id: str
    added_by: str | None
    added_at: datetime


_COLUMNS = [getattr(BenchmarkOwner, f) for f in OwnerRow.__dataclass_fields__]


def is_co_owner(conn: Connection, benchmark_id: str, api_key_id: str) -> bool:
    stmt = select(exists().where(BenchmarkOwner.benchmark_id == benchmark_id, BenchmarkOwner.api_key_id == api_key_id))
    return bool(conn.execute(stmt).scalar())


def list_for(conn: Connection, benchmark_id: str) -> list[tuple[OwnerRow, str]]:
    """Every co-owner with its key's name, in the order they were added."""
    stmt = (
        select(*_COLUMNS, ApiKey.name)
        .join(ApiKey, ApiKey.id == BenchmarkOwner.api_key_id)
        .where(BenchmarkOwner.benchmark_id == benchmark_id)
        .order_by(BenchmarkOwner.added_at, BenchmarkOwner.api_key_id)
    )
    return [(OwnerRow(*r[:-1]), r[-1]) for r in conn.execute(stmt)]


def add(conn: Connection, row: OwnerRow) -> bool:
    """Insert a co-owner; False when the key already is one."""
    try:
        with conn.begin_nested():
            conn.execute(BenchmarkOwner.__table__.insert().values(**row.__dict__))
    except IntegrityError:
        return False
    return True


def remove(conn: Connection, benchmark_id: str, api_key_id: str) -> bool:
    res = conn.execute(
        delete(BenchmarkOwner).where(
            BenchmarkOwner.benchmark_id == benchmark_id, BenchmarkOwner.api_key_id == api_key_id
        )
    )
    return res.rowcount > 0
