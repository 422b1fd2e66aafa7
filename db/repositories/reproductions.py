"""The ``reproduction_report`` table: one row per run of a paper's reproduction check."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, select

from db.models import ReproductionReport


@dataclass(frozen=True)
class ReportRow:
    """A stored report; ``figures`` and ``run_ids`` are JSON texts."""

    seq: int
    id: str
    paper: str
    verdict: str
    claim: str
    reason: str
    figures: str
    run_ids: str
    code_version: str
    duration_ms: float
    job_id: str | None
    created_at: datetime


_COLUMNS = [getattr(ReproductionReport, f) for f in ReportRow.__dataclass_fields__]


def insert(conn: Connection, row: ReportRow) -> None:
    conn.execute(ReproductionReport.__table__.insert().values(**{k: v for k, v in row.__dict__.items() if k != "seq"}))


def get(conn: Connection, report_id: str) -> ReportRow | None:
    r = conn.execute(select(*_COLUMNS).where(ReproductionReport.id == report_id)).first()
    return ReportRow(*r) if r else None


def history(conn: Connection, paper: str, limit: int) -> list[ReportRow]:
    """The newest ``limit`` reports of ``paper``, newest first."""
    stmt = (
        select(*_COLUMNS).where(ReproductionReport.paper == paper).order_by(ReproductionReport.seq.desc()).limit(limit)
    )
    return [ReportRow(*r) for r in conn.execute(stmt)]


def latest_per_paper(conn: Connection) -> dict[str, ReportRow]:
    """The newest report of every paper that has one."""
    newest = select(func.max(ReproductionReport.seq)).group_by(ReproductionReport.paper)
    stmt = select(*_COLUMNS).where(ReproductionReport.seq.in_(newest))
    return {r.paper: r for r in (ReportRow(*row) for row in conn.execute(stmt))}
