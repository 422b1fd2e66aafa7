"""The ``job`` table: claim, heartbeat, finish, cancel, reap and list (SQL only; the rules live in api/jobs.py).

Every state change is a conditional UPDATE on (id, status[, attempts]), so a worker that lost its claim (the reaper
re-queued or failed its job) can no longer overwrite the row.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, func, or_, select, update

from db.models import Job

ACTIVE = ("queued", "running")
TERMINAL = ("succeeded", "failed", "cancelled")


@dataclass(frozen=True)
class JobRow:
    seq: int
    id: str
    kind: str
    name: str
    version: str
    params: str
    params_sha256: str
    status: str
    cancel_requested: bool
    attempts: int
    progress_fraction: float
    progress_message: str
    timeout_s: float
    problem: str | None
    run_id: str | None
    api_key_id: str | None
    client: str | None
    worker: str | None
    created_at: datetime
    enqueued_at: datetime | None
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None


_COLUMNS = [getattr(Job, f) for f in JobRow.__dataclass_fields__]
_T = Job.__table__


def _row(r: Any) -> JobRow:
    return JobRow(*r)


def insert(conn: Connection, values: dict[str, Any]) -> None:
    conn.execute(_T.insert().values(**values))


def get(conn: Connection, job_id: str) -> JobRow | None:
    r = conn.execute(select(*_COLUMNS).where(Job.id == job_id)).first()
    return _row(r) if r else None


def _owner(api_key_id: str | None, client: str | None) -> ColumnElement[bool]:
    if api_key_id is not None:
        return Job.api_key_id == api_key_id
    return and_(Job.api_key_id.is_(None), Job.client == client)


def count_active(conn: Connection, *, api_key_id: str | None, client: str | None) -> int:
    """Queued + running jobs of a key (or, for anonymous callers, of a client address)."""
    stmt = select(func.count()).select_from(_T).where(_owner(api_key_id, client), Job.status.in_(ACTIVE))
    return int(conn.execute(stmt).scalar_one())


def claim(conn: Connection, job_id: str, *, worker: str, now: datetime) -> int | None:
    """queued → running; returns the attempt number, or None when the job is no longer queued."""
    res = conn.execute(
        update(_T)
        .where(Job.id == job_id, Job.status == "queued")
        .values(status="running", attempts=Job.attempts + 1, worker=worker, started_at=now, heartbeat_at=now)
    )
    if res.rowcount != 1:
        return None
    return int(conn.execute(select(Job.attempts).where(Job.id == job_id)).scalar_one())


def heartbeat(
    conn: Connection, job_id: str, attempt: int, *, now: datetime, fraction: float, message: str
) -> bool | None:
    """Record liveness and progress; returns ``cancel_requested``, or None when this attempt lost the job."""
    res = conn.execute(
        update(_T)
        .where(Job.id == job_id, Job.status == "running", Job.attempts == attempt)
        .values(heartbeat_at=now, progress_fraction=fraction, progress_message=message)
    )
    if res.rowcount != 1:
        return None
    return bool(conn.execute(select(Job.cancel_requested).where(Job.id == job_id)).scalar_one())


def finish(
    conn: Connection,
    job_id: str,
    attempt: int,
    *,
    status: str,
    now: datetime,
    run_id: str | None = None,
    problem: str | None = None,
    fraction: float | None = None,
    message: str | None = None,
) -> bool:
    """running → a terminal status (or back to queued) for the attempt that holds the job."""
    values: dict[str, Any] = {"status": status, "run_id": run_id, "problem": problem, "heartbeat_at": now}
    if message is not None:
        values["progress_message"] = message
    if status in TERMINAL:
        values["finished_at"] = now
    else:
        values["enqueued_at"] = now
    if fraction is not None:
        values["progress_fraction"] = fraction
    res = conn.execute(
        update(_T).where(Job.id == job_id, Job.status == "running", Job.attempts == attempt).values(**values)
    )
    return res.rowcount == 1


def request_cancel(conn: Connection, job_id: str, *, now: datetime) -> None:
    """queued → cancelled at once; running → ``cancel_requested`` (the worker stops at its next progress call)."""
    conn.execute(
        update(_T)
        .where(Job.id == job_id, Job.status == "queued")
        .values(status="cancelled", cancel_requested=True, finished_at=now)
    )
    conn.execute(update(_T).where(Job.id == job_id, Job.status == "running").values(cancel_requested=True))


def fail_queued(conn: Connection, job_id: str, *, now: datetime, problem: str) -> None:
    """A job whose enqueue failed: queued → failed."""
    conn.execute(
        update(_T)
        .where(Job.id == job_id, Job.status == "queued")
        .values(status="failed", finished_at=now, problem=problem)
    )


def stale_running(conn: Connection, *, heartbeat_before: datetime) -> list[JobRow]:
    stmt = select(*_COLUMNS).where(Job.status == "running", Job.heartbeat_at < heartbeat_before).order_by(Job.seq)
    return [_row(r) for r in conn.execute(stmt)]


def overdue_running(conn: Connection, *, now: datetime, grace_s: float) -> list[JobRow]:
    """Running jobs past ``started_at + timeout_s + grace_s`` (compared in Python: portable date arithmetic; the
    column type reads timestamps back timezone-aware on every backend)."""
    stmt = select(*_COLUMNS).where(Job.status == "running").order_by(Job.seq)
    rows = [_row(r) for r in conn.execute(stmt)]
    return [r for r in rows if r.started_at and (now - r.started_at).total_seconds() > r.timeout_s + grace_s]


def interrupted(conn: Connection, job_id: str, attempt: int, *, now: datetime) -> bool:
    """A worker stopping mid-job: running → queued with no message (``enqueued_at`` NULL) until one is enqueued."""
    res = conn.execute(
        update(_T)
        .where(Job.id == job_id, Job.status == "running", Job.attempts == attempt)
        .values(status="queued", enqueued_at=None, heartbeat_at=now)
    )
    return res.rowcount == 1


def old_queued(conn: Connection, *, enqueued_before: datetime) -> list[JobRow]:
    """Queued jobs without a message (interrupted) or whose message is older than ``enqueued_before``."""
    stale = or_(Job.enqueued_at.is_(None), Job.enqueued_at < enqueued_before)
    stmt = select(*_COLUMNS).where(Job.status == "queued", stale).order_by(Job.seq)
    return [_row(r) for r in conn.execute(stmt)]


def mark_enqueued(conn: Connection, job_id: str, *, now: datetime) -> None:
    conn.execute(update(_T).where(Job.id == job_id, Job.status == "queued").values(enqueued_at=now))


def release(conn: Connection, job: JobRow, *, status: str, now: datetime, problem: str | None = None) -> bool:
    """Reaper: a stale running attempt → ``status`` (queued again, failed or cancelled), if nobody moved it."""
    values: dict[str, Any] = {"status": status, "problem": problem}
    if status == "queued":
        values["enqueued_at"] = now
    else:
        values["finished_at"] = now
    res = conn.execute(
        update(_T).where(Job.id == job.id, Job.status == "running", Job.attempts == job.attempts).values(**values)
    )
    return res.rowcount == 1


def list_page(
    conn: Connection,
    *,
    status: str | None,
    limit: int,
    before_seq: int | None,
    owner: tuple[str | None, str | None] | None = None,
) -> list[JobRow]:
    """Newest first, keyset on ``seq``; ``owner`` = (api_key_id, client) restricts to one caller's jobs."""
    stmt = select(*_COLUMNS).order_by(Job.seq.desc()).limit(limit)
    if status is not None:
        stmt = stmt.where(Job.status == status)
    if before_seq is not None:
        stmt = stmt.where(Job.seq < before_seq)
    if owner is not None:
        stmt = stmt.where(_owner(*owner))
    return [_row(r) for r in conn.execute(stmt)]


def counts_by_status(conn: Connection) -> dict[str, int]:
    return {s: int(n) for s, n in conn.execute(select(Job.status, func.count()).group_by(Job.status))}


def first_job_of_run(conn: Connection, run_id: str) -> str | None:
    """The id of the earliest job whose answer is the run ``run_id`` (None when no job answered it)."""
    return conn.execute(select(Job.id).where(Job.run_id == run_id).order_by(Job.seq).limit(1)).scalar()
