"""Jobs (ARCHITECTURE §3; service-anchors §5): our ``job`` table is the source of truth, Huey only carries ids.

Submission inserts the row, commits, and only then enqueues ``run_job(job_id)``. A worker claims the row
(queued → running, attempts + 1) with a conditional UPDATE, so a duplicated message runs nothing twice; a heartbeat
thread stores liveness and progress every ``job_heartbeat_s`` and reads ``cancel_requested``; the ``progress``
callback handed to the function raises ``Cancelled`` once that flag is seen (or ``JobTimeout`` past the job's
timeout). The reaper re-queues idempotent jobs whose heartbeat stopped (up to ``job_max_attempts``), fails the
rest, fails jobs far past their timeout, and re-enqueues jobs left queued too long (a lost enqueue). Queue storage:
Redis when ``REDIS_URL`` is set, else a SQLite file; in-process modes for tests.
"""

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from huey import Huey, MemoryHuey, RedisHuey, SqliteHuey
from huey.exceptions import TaskTimeout
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from api import arrays
from api.envelope import sha256_hex, utc_iso
from api.execution import cached_run, run_estimator
from api.platform import rescore_all
from api.problems import ApiError, Problem
from api.settings import Settings
from db.engine import Engines, make_engines
from db.repositories import jobs as repo
from db.repositories.jobs import JobRow
from service.errors import Cancelled, DomainError
from service.registry import ESTIMATORS, Progress

log = logging.getLogger("estibench.jobs")
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class JobTimeout(Exception):
    """Raised by the progress callback once a job has run longer than its timeout."""


class JobProgress(BaseModel):
    fraction: float = Field(ge=0, le=1, description="Fraction done, 0..1, as last reported by the function.")
    message: str = Field(description="Last progress message.")


class JobOut(BaseModel):
    """A job; poll ``GET /v1/jobs/{id}`` until ``status`` is terminal, then read ``/v1/runs/{run_id}``."""

    id: str
    kind: str = Field(description="What runs: 'estimator' (see api/jobs.py KINDS).")
    name: str
    version: str
    params_sha256: str
    status: JobStatus
    progress: JobProgress
    run_id: str | None = Field(description="The run the job produced (or found cached) once it succeeded.")
    problem: Problem | None = Field(description="Why the job failed (problem details), else null.")
    attempts: int = Field(description="How many times a worker started it (a lost worker's job re-runs).")
    cancel_requested: bool
    timeout_s: float
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


def job_json(row: JobRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "name": row.name,
        "version": row.version,
        "params_sha256": row.params_sha256,
        "status": row.status,
        "progress": {"fraction": row.progress_fraction, "message": row.progress_message},
        "run_id": row.run_id,
        "problem": json.loads(row.problem) if row.problem else None,
        "attempts": row.attempts,
        "cancel_requested": row.cancel_requested,
        "timeout_s": row.timeout_s,
        "created_at": utc_iso(row.created_at),
        "started_at": utc_iso(row.started_at) if row.started_at else None,
        "finished_at": utc_iso(row.finished_at) if row.finished_at else None,
    }


def utcnow() -> datetime:
    return datetime.now(UTC)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def problem_json(status: int, title: str, detail: str, errors: list[dict[str, Any]] | None = None) -> str:
    """The problem body stored on a failed job (the same model the HTTP errors use)."""
    problem = Problem(title=title, status=status, detail=detail, errors=errors)  # type: ignore[arg-type]
    return problem.model_dump_json(exclude_none=True)


@dataclass(frozen=True)
class JobKind:
    """How a kind of job runs: ``run(ctx, job, progress) -> run id`` (None for work that makes no run);
    idempotent kinds are re-run after a crash."""

    run: Callable[["JobContext", JobRow, Progress], str | None]
    idempotent: bool = True


def _run_estimator_job(ctx: "JobContext", job: JobRow, progress: Progress) -> str:
    spec = ESTIMATORS.get(job.name)
    if spec is None:
        raise ApiError(404, f"no estimator named {job.name!r}")
    params = spec.params_model.model_validate_json(job.params)
    resolved = arrays.resolve(ctx.engines, params)
    row, _ = run_estimator(ctx.engines, spec, params, api_key_id=job.api_key_id, progress=progress, resolved=resolved)
    return row.id


def _run_rescore_job(ctx: "JobContext", job: JobRow, progress: Progress) -> None:
    """Re-score every submission of benchmark ``job.name`` against its current answer-key version."""
    rescore_all(ctx.engines, job.name, progress)


KINDS: dict[str, JobKind] = {
    "estimator": JobKind(_run_estimator_job),
    "rescore": JobKind(_run_rescore_job, idempotent=False),
}


def make_huey(settings: Settings) -> Huey | None:
    """The queue for ``settings.queue`` (see api/settings.py); None when jobs are off."""
    if settings.queue == "off":
        return None
    if settings.queue in ("immediate", "memory"):
        return MemoryHuey(settings.queue_name, results=False, immediate=settings.queue == "immediate")
    if settings.redis_url:
        return RedisHuey(settings.queue_name, url=settings.redis_url, results=False)
    path = settings.queue_path or settings.data_dir / "queue.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteHuey(settings.queue_name, filename=str(path), results=False)


def _ignore_further_interrupts() -> None:
    """A worker process being stopped gets SIGTERM from the consumer too: finish the re-queue undisturbed."""
    with contextlib.suppress(ValueError):  # not the main thread (thread workers): nothing to change
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Live:
    """State shared by a running job's thread and its heartbeat thread."""

    def __init__(self) -> None:
        self.fraction = 0.0
        self.message = ""
        self.cancel = threading.Event()
        self.stop = threading.Event()
        self.lost = False


class JobContext:
    """Settings, engines (re-created after a fork) and the Huey queue with the ``run_job`` task registered."""

    def __init__(self, settings: Settings, engines: Engines | None = None) -> None:
        self.settings = settings
        self._engines = engines
        self._pid = os.getpid()
        self.huey = make_huey(settings)
        self._task = self.huey.task(name="estibench.run_job")(self.execute) if self.huey is not None else None

    @property
    def engines(self) -> Engines:
        if self._engines is None or self._pid != os.getpid():
            self._engines = make_engines(self.settings.database_url, synchronous=self.settings.sqlite_synchronous)
            self._pid = os.getpid()
        return self._engines

    @property
    def available(self) -> bool:
        return self._task is not None

    def enqueue(self, job_id: str, timeout_s: float) -> None:
        assert self.huey is not None and self._task is not None
        self.huey.enqueue(self._task.s(job_id, timeout=timeout_s + 5 * self.settings.job_heartbeat_s))

    def queue_depth(self) -> int | None:
        if self.huey is None:
            return None
        try:
            return int(self.huey.pending_count())
        except Exception:
            return None

    # -- submission (API side) ----------------------------------------------------------------------------------

    def submit(
        self, *, kind: str, name: str, version: str, params_json: str, api_key_id: str | None, client: str | None
    ) -> JobRow:
        """Insert the job (succeeded at once when an identical run exists), commit, then enqueue it."""
        if not self.available:
            raise ApiError(503, "no job queue is configured on this server")
        engines = self.engines
        now = utcnow()
        job_id = str(uuid.uuid4())
        values: dict[str, Any] = {
            "id": job_id,
            "kind": kind,
            "name": name,
            "version": version,
            "params": params_json,
            "params_sha256": sha256_hex(params_json),
            "cancel_requested": False,
            "attempts": 0,
            "progress_message": "",
            "timeout_s": self.settings.job_timeout_s,
            "api_key_id": api_key_id,
            "client": (client or "")[:64] or None,
            "created_at": now,
        }
        existing = cached_run(engines, kind, name, version, params_json)
        with engines.write.begin() as conn:
            if existing is not None:
                values.update(status="succeeded", run_id=existing.id, progress_fraction=1.0, finished_at=now)
                values["progress_message"] = "identical run found"
            else:
                active = repo.count_active(conn, api_key_id=api_key_id, client=values["client"])
                if active >= self.settings.max_jobs_per_key:
                    raise ApiError(
                        429,
                        f"{active} jobs are queued or running for this caller; the cap is "
                        f"{self.settings.max_jobs_per_key}",
                        headers={"Retry-After": "5"},
                    )
                values.update(status="queued", progress_fraction=0.0, enqueued_at=now)
            repo.insert(conn, values)
        if existing is None:
            try:
                self.enqueue(job_id, self.settings.job_timeout_s)
            except Exception as exc:
                log.exception("enqueue failed", extra={"job_id": job_id})
                with engines.write.begin() as conn:
                    repo.fail_queued(
                        conn,
                        job_id,
                        now=utcnow(),
                        problem=problem_json(503, "Service Unavailable", "the job queue is unreachable"),
                    )
                raise ApiError(503, "the job queue is unreachable") from exc
        return self.get(job_id)  # type: ignore[return-value]

    def get(self, job_id: str) -> JobRow | None:
        with self.engines.read.connect() as conn:
            return repo.get(conn, job_id)

    def cancel(self, job_id: str) -> JobRow:
        with self.engines.write.begin() as conn:
            repo.request_cancel(conn, job_id, now=utcnow())
        row = self.get(job_id)
        assert row is not None
        return row

    # -- execution (worker side) --------------------------------------------------------------------------------

    def execute(self, job_id: str) -> None:
        """The Huey task: claim, run with heartbeat and progress, store the outcome for this attempt."""
        engines = self.engines
        with engines.write.begin() as conn:
            attempt = repo.claim(conn, job_id, worker=worker_id(), now=utcnow())
        if attempt is None:
            return
        job = self.get(job_id)
        assert job is not None
        live = _Live()
        deadline = time.monotonic() + job.timeout_s

        def progress(fraction: float, message: str = "") -> None:
            live.fraction = min(max(float(fraction), 0.0), 1.0)
            live.message = str(message)[:500]
            if live.cancel.is_set():
                raise Cancelled("the job was cancelled")
            if time.monotonic() > deadline:
                raise JobTimeout

        beat = threading.Thread(target=self._heartbeat, args=(job_id, attempt, live), daemon=True)
        beat.start()
        status, run_id, problem = "failed", None, None
        try:
            kind = KINDS.get(job.kind)
            if kind is None:
                raise ApiError(422, f"unknown job kind {job.kind!r}")
            run_id = kind.run(self, job, progress)
            status = "succeeded"
        except Cancelled:
            status = "cancelled"
        except (JobTimeout, TaskTimeout):
            problem = problem_json(504, "Gateway Timeout", f"the job exceeded its timeout of {job.timeout_s:g} s")
        except DomainError as exc:
            problem = problem_json(
                422, "Unprocessable Content", exc.msg, [{"loc": ["params", *exc.loc], "msg": exc.msg, "type": exc.type}]
            )
        except ValidationError as exc:
            errors = [{"loc": ["params", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
            problem = problem_json(422, "Unprocessable Content", "the params failed validation", errors)
        except ApiError as exc:
            problem = problem_json(exc.status, "Job failed", exc.detail, exc.errors)
        except KeyboardInterrupt:
            _ignore_further_interrupts()
            self._stop_beat(live, beat)
            self._requeue(job_id, attempt)
            raise
        except Exception:
            log.exception("job failed", extra={"job_id": job_id})
            problem = problem_json(500, "Internal Server Error", "the job failed with an internal error")
        self._stop_beat(live, beat)
        if live.lost:
            return
        with engines.write.begin() as conn:
            repo.finish(
                conn,
                job_id,
                attempt,
                status=status,
                now=utcnow(),
                run_id=run_id,
                problem=problem,
                fraction=1.0 if status == "succeeded" else None,
                message=live.message,
            )

    @staticmethod
    def _stop_beat(live: _Live, beat: threading.Thread) -> None:
        live.stop.set()
        beat.join()

    def _heartbeat(self, job_id: str, attempt: int, live: _Live) -> None:
        while not live.stop.wait(self.settings.job_heartbeat_s):
            try:
                with self.engines.write.begin() as conn:
                    flag = repo.heartbeat(
                        conn, job_id, attempt, now=utcnow(), fraction=live.fraction, message=live.message
                    )
            except SQLAlchemyError:
                log.warning("heartbeat failed", extra={"job_id": job_id})
                continue
            if flag is None:
                live.lost = True
                live.cancel.set()
            elif flag:
                live.cancel.set()

    def _requeue(self, job_id: str, attempt: int) -> None:
        """A worker stopping mid-job puts the job back as queued-without-message; the reaper or the next worker
        start enqueues it (this process may not take another message while it stops)."""
        try:
            with self.engines.write.begin() as conn:
                repo.interrupted(conn, job_id, attempt, now=utcnow())
        except Exception:
            log.exception("could not re-queue an interrupted job", extra={"job_id": job_id})

    # -- reaper ------------------------------------------------------------------------------------------------

    def reap(self) -> dict[str, int]:
        """One pass: handle stale running jobs, jobs far past their timeout, and jobs queued for too long."""
        s = self.settings
        now = utcnow()
        grace = max(30.0, 5 * s.job_heartbeat_s)
        with self.engines.read.connect() as conn:
            stale = repo.stale_running(conn, heartbeat_before=now - timedelta(seconds=s.job_stale_after_s))
            overdue = repo.overdue_running(conn, now=now, grace_s=grace)
            old = repo.old_queued(conn, enqueued_before=now - timedelta(seconds=s.job_requeue_after_s))
        counts = {"requeued": 0, "failed": 0, "cancelled": 0, "reenqueued": 0}
        overdue_ids = {j.id for j in overdue}
        handled: set[str] = set()
        for job in [*overdue, *stale]:
            if job.id in handled:
                continue
            handled.add(job.id)
            kind = KINDS.get(job.kind)
            if job.id in overdue_ids:
                status = "failed"
                problem = problem_json(504, "Gateway Timeout", f"the job exceeded its timeout of {job.timeout_s:g} s")
            elif job.cancel_requested:
                status, problem = "cancelled", None
            elif kind is not None and kind.idempotent and job.attempts < s.job_max_attempts:
                status, problem = "queued", None
            else:
                status = "failed"
                problem = problem_json(
                    503,
                    "Service Unavailable",
                    f"the worker running this job stopped (no heartbeat for {s.job_stale_after_s:g} s) "
                    f"after {job.attempts} attempt(s)",
                )
            with self.engines.write.begin() as conn:
                moved = repo.release(conn, job, status=status, now=now, problem=problem)
            if not moved:
                continue
            log.warning("reaped job", extra={"job_id": job.id, "to": status})
            if status == "queued":
                self.enqueue(job.id, job.timeout_s)
                counts["requeued"] += 1
            else:
                counts[status] += 1
        counts["reenqueued"] = self._enqueue_all(old, now)
        return counts

    def _enqueue_all(self, jobs: list[JobRow], now: datetime) -> int:
        for job in jobs:
            with self.engines.write.begin() as conn:
                repo.mark_enqueued(conn, job.id, now=now)
            self.enqueue(job.id, job.timeout_s)
        return len(jobs)

    def enqueue_interrupted(self) -> int:
        """At worker start: enqueue the jobs a stopping worker put back without a message."""
        now = utcnow()
        with self.engines.read.connect() as conn:
            jobs = [j for j in repo.old_queued(conn, enqueued_before=now) if j.enqueued_at is None]
        return self._enqueue_all(jobs, now)

    def start_reaper(self) -> Callable[[], None]:
        """Run ``reap`` every ``job_reaper_interval_s`` in a daemon thread; returns a function that stops it."""
        stop = threading.Event()
        interval = self.settings.job_reaper_interval_s

        def loop() -> None:
            while not stop.wait(interval):
                try:
                    self.reap()
                except Exception:
                    log.exception("reaper pass failed")

        thread = threading.Thread(target=loop, name="estibench-reaper", daemon=True)
        thread.start()

        def stop_reaper() -> None:
            stop.set()
            thread.join(timeout=interval + 5)

        return stop_reaper
