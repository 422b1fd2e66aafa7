"""Benchmarks and their immutable, content-hashed answer-key versions."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, select, update
from sqlalchemy.exc import IntegrityError

from db.models import AnswerKeyVersion, Benchmark


@dataclass(frozen=True)
class BenchmarkRow:
    id: str
    name: str
    scorer: str
    description: str
    scorer_params: str
    max_submissions_per_day: int
    owner_key_id: str | None
    current_version: int
    created_at: datetime


@dataclass(frozen=True)
class VersionRow:
    version: int
    sha256: str
    n_public: int
    n_private: int
    created_at: datetime


_B = [getattr(Benchmark, f) for f in BenchmarkRow.__dataclass_fields__]
_V = [getattr(AnswerKeyVersion, f) for f in VersionRow.__dataclass_fields__]


def create(conn: Connection, row: BenchmarkRow, version: VersionRow, items_json: str) -> bool:
    """Insert the benchmark with answer-key version 1; False when the name is taken."""
    try:
        with conn.begin_nested():
            conn.execute(Benchmark.__table__.insert().values(**row.__dict__))
            conn.execute(
                AnswerKeyVersion.__table__.insert().values(benchmark_id=row.id, items=items_json, **version.__dict__)
            )
    except IntegrityError:
        return False
    return True


def get(conn: Connection, benchmark_id: str) -> BenchmarkRow | None:
    r = conn.execute(select(*_B).where(Benchmark.id == benchmark_id)).first()
    return BenchmarkRow(*r) if r else None


def list_all(conn: Connection, limit: int, after_name: str | None) -> list[BenchmarkRow]:
    stmt = select(*_B).order_by(Benchmark.name).limit(limit)
    if after_name is not None:
        stmt = stmt.where(Benchmark.name > after_name)
    return [BenchmarkRow(*r) for r in conn.execute(stmt)]


def current_sha256(conn: Connection, benchmark_ids: list[str]) -> dict[str, str]:
    """The current answer-key version's sha256 of each benchmark, in one query."""
    stmt = (
        select(AnswerKeyVersion.benchmark_id, AnswerKeyVersion.sha256)
        .join(
            Benchmark,
            (Benchmark.id == AnswerKeyVersion.benchmark_id) & (Benchmark.current_version == AnswerKeyVersion.version),
        )
        .where(Benchmark.id.in_(benchmark_ids))
    )
    return {bid: sha for bid, sha in conn.execute(stmt)}


def versions(conn: Connection, benchmark_id: str) -> list[VersionRow]:
    stmt = select(*_V).where(AnswerKeyVersion.benchmark_id == benchmark_id).order_by(AnswerKeyVersion.version)
    return [VersionRow(*r) for r in conn.execute(stmt)]


def versions_page(conn: Connection, benchmark_id: str, limit: int, before: int | None) -> list[VersionRow]:
    """Up to ``limit`` versions, newest first, older than version ``before`` when given."""
    stmt = (
        select(*_V)
        .where(AnswerKeyVersion.benchmark_id == benchmark_id)
        .order_by(AnswerKeyVersion.version.desc())
        .limit(limit)
    )
    if before is not None:
        stmt = stmt.where(AnswerKeyVersion.version < before)
    return [VersionRow(*r) for r in conn.execute(stmt)]


def get_version(conn: Connection, benchmark_id: str, number: int) -> tuple[VersionRow, str] | None:
    """One version and its items' canonical JSON; None when the benchmark has no such version."""
    stmt = select(*_V, AnswerKeyVersion.items).where(
        AnswerKeyVersion.benchmark_id == benchmark_id, AnswerKeyVersion.version == number
    )
    r = conn.execute(stmt).first()
    return (VersionRow(*r[:-1]), r[-1]) if r else None


def version_items(conn: Connection, benchmark_id: str, version: int) -> str | None:
    stmt = select(AnswerKeyVersion.items).where(
        AnswerKeyVersion.benchmark_id == benchmark_id, AnswerKeyVersion.version == version
    )
    return conn.execute(stmt).scalar()


def add_version(
    conn: Connection, benchmark_id: str, sha256: str, items_json: str, n_public: int, n_private: int, when: datetime
) -> VersionRow:
    """Append the next version and make it current (run inside a write transaction)."""
    latest = conn.execute(
        select(func.max(AnswerKeyVersion.version)).where(AnswerKeyVersion.benchmark_id == benchmark_id)
    ).scalar()
    row = VersionRow(int(latest or 0) + 1, sha256, n_public, n_private, when)
    conn.execute(
        AnswerKeyVersion.__table__.insert().values(benchmark_id=benchmark_id, items=items_json, **row.__dict__)
    )
    conn.execute(update(Benchmark).where(Benchmark.id == benchmark_id).values(current_version=row.version))
    return row
