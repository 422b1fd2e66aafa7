"""Jobs: our ``job`` table is the source of truth, Huey only carries ids.

Submission inserts the row, commits, and only then enqueues ``run_job(job_id)``. A worker claims the row
(queued → running, attempts + 1) with a conditional UPDATE, so a duplicated message runs nothing twice; a heartbeat
thread stores liveness and progress every ``job_heartbeat_s`` and reads ``cancel_requested``; the ``progress``
callback handed to the function raises ``Cancelled`` once that flag is seen (or ``JobTimeout`` past the job's
timeout). The reaper re-queues idempotent jobs whose heartbeat stopped (up to ``job_max_attempts``), fails the
rest, fails jobs far past their timeout, and re-enqueues jobs left queued too long (a lost enqueue). Queue storage:
Redis when ``REDIS_URL`` is set, else a SQLite file; in-process modes for tests. The lifecycle is drawn in
docs/architecture.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from huey import Huey, MemoryHuey, RedisHuey, SqliteHuey
from huey.exceptions import TaskTimeout
from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from db import locks
from db.engine import Engines
from db.repositories import jobs as repo
from db.repositories.jobs import JobRow
from service.errors import Cancelled, DomainError
from service.registry import Progress
from usecases import cursors
from usecases.api_keys import Principal
from usecases.clock import utcnow
from usecases.errors import Conflict, Forbidden, InvalidFields, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.problems import problem_json
from usecases.runs import sha256_hex
from usecases.settings import Settings

log = logging.getLogger("estibench.jobs")
STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


class JobTimeout(Exception):
    """Raised by the progress callback once a job has run longer than its timeout."""


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class JobKind:
    """How a kind of job runs: ``run(job, progress) -> run id`` (None for work that makes no run); idempotent
    kinds are re-run after a crash."""

    run: Callable[[JobRow, Progress], str | None]
    idempotent: bool = True


def make_huey(settings: Settings) -> Huey | None:
    """The queue for ``settings.queue`` (see usecases/settings.py); None when jobs are off."""
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


def _failure(exc: BaseException, timeout_s: float) -> str:
    """The stored problem for an exception a job's function raised."""
    if isinstance(exc, JobTimeout | TaskTimeout):
        return problem_json(504, f"the job exceeded its timeout of {timeout_s:g} s")
    if isinstance(exc, DomainError):
        return problem_json(422, exc.msg, [{"loc": ["params", *exc.loc], "msg": exc.msg, "type": exc.type}])
    if isinstance(exc, ValidationError):
        errors = [{"loc": ["params", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        return problem_json(422, "the params failed validation", errors)
    if isinstance(exc, InvalidFields):
        return problem_json(exc.status, exc.detail, exc.errors)
    assert isinstance(exc, NotFound | Unavailable)
    return problem_json(exc.status, exc.detail)


class JobQueue:
    """The Huey queue (created on first use, so building one touches no file) with the ``run_job`` task, and
    every job operation: submit, read, cancel, execute with heartbeat, reap. ``engines()`` gives the database
    engines of the current process."""

    def __init__(
        self,
        settings: Settings,
        engines: Callable[[], Engines],
        kinds: Mapping[str, JobKind],
        passes: Sequence[Callable[[], object]] = (),
    ) -> None:
        self.settings = settings
        self._engines = engines
        self.kinds = kinds
        self.passes = tuple(passes)
        """Further work the reaper's thread does on each pass after ``reap`` (freezing ended challenge phases)."""
        self._huey: Huey | None = None
        self._task: Any = None

    @property
    def engines(self) -> Engines:
        return self._engines()

    def with_kinds(self, kinds: Mapping[str, JobKind]) -> JobQueue:
        """A queue on the same settings and database that runs ``kinds``."""
        return JobQueue(self.settings, self._engines, kinds, self.passes)

    @property
    def available(self) -> bool:
        return self.settings.queue != "off"

    @property
    def huey(self) -> Huey:
        if self._huey is None:
            huey = make_huey(self.settings)
            assert huey is not None, "no job queue is configured"
            self._task = huey.task(name="estibench.run_job")(self.execute)
            self._huey = huey
        return self._huey

    def enqueue(self, job_id: str, timeout_s: float) -> None:
        huey = self.huey
        huey.enqueue(self._task.s(job_id, timeout=timeout_s + 5 * self.settings.job_heartbeat_s))

    def queue_depth(self) -> int | None:
        if not self.available:
            return None
        try:
            return int(self.huey.pending_count())
        except Exception:
            return None

    # -- submission (API side) ----------------------------------------------------------------------------------

    def submit(
        self,
        *,
        kind: str,
        name: str,
        version: str,
        params_json: str,
        api_key_id: str | None,
        client: str | None,
        existing_run_id: str | None = None,
    ) -> JobRow:
        """Insert the job, commit, then enqueue it. The caller has looked for an identical stored run: with
        ``existing_run_id`` the job is stored as succeeded at once and nothing is enqueued."""
        if not self.available:
            raise Unavailable("no job queue is configured on this server")
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
        with engines.write.begin() as conn:
            if existing_run_id is not None:
                values.update(status="succeeded", run_id=existing_run_id, progress_fraction=1.0, finished_at=now)
                values["progress_message"] = "identical run found"
            else:
                locks.serialize_on(conn, f"jobs:key:{api_key_id}" if api_key_id else f"jobs:client:{values['client']}")
                active = repo.count_active(conn, api_key_id=api_key_id, client=values["client"])
                if active >= self.settings.max_jobs_per_key:
                    raise QuotaExceeded(
                        f"{active} jobs are queued or running for this caller; the cap is "
                        f"{self.settings.max_jobs_per_key}",
                        retry_after_s=5,
                    )
                values.update(status="queued", progress_fraction=0.0, enqueued_at=now)
            repo.insert(conn, values)
        if existing_run_id is None:
            try:
                self.enqueue(job_id, self.settings.job_timeout_s)
            except Exception as exc:
                log.exception("enqueue failed", extra={"job_id": job_id})
                with engines.write.begin() as conn:
                    repo.fail_queued(
                        conn, job_id, now=utcnow(), problem=problem_json(503, "the job queue is unreachable")
                    )
                raise Unavailable("the job queue is unreachable") from exc
        return self.get(job_id)  # type: ignore[return-value]

    def get(self, job_id: str) -> JobRow | None:
        with self.engines.read.connect() as conn:
            return repo.get(conn, job_id)

    def _owner(self, principal: Principal | None) -> tuple[str | None, str | None] | None:
        """With ``REQUIRE_KEYS`` a key sees its own jobs (an admin all); otherwise jobs are open to read."""
        if not self.settings.require_keys:
            return None
        if principal is None:
            raise Unauthorized("an API key is required")
        return None if principal.is_admin else (principal.key_id, None)

    def visible(self, principal: Principal | None, job_id: str) -> JobRow:
        """The job if ``principal`` may see it."""
        owner = self._owner(principal)
        row = self.get(job_id)
        if row is None or (owner is not None and row.api_key_id != owner[0]):
            raise NotFound(f"no job {job_id!r}")
        return row

    def page(
        self, principal: Principal | None, *, status: str | None, limit: int, cursor: str | None
    ) -> cursors.Page[JobRow]:
        """A page of the jobs ``principal`` may see, newest first."""
        owner = self._owner(principal)
        before = cursors.decode_seq(cursor)
        with self.engines.read.connect() as conn:
            return cursors.keyset_page(
                lambda n: repo.list_page(conn, status=status, limit=n, before_seq=before, owner=owner),
                limit,
                key=lambda r: r.seq,
            )

    def cancel(self, principal: Principal | None, job_id: str, client: str | None) -> JobRow:
        """Cancel: a queued job at once, a running one at its next progress report. The key that made the job or
        an admin may cancel it; an anonymous job also from the address that made it."""
        row = self.visible(principal, job_id)
        if row.api_key_id is not None:
            if principal is None:
                raise Unauthorized("this job belongs to an API key; send it")
            if principal.key_id != row.api_key_id and not principal.is_admin:
                raise Forbidden("only the key that made the job, or an admin, may cancel it")
        elif not (principal and principal.is_admin) and (principal is not None or row.client != client):
            raise Forbidden("an anonymous job may be cancelled from its own address, or by an admin")
        if row.status in ("succeeded", "failed"):
            raise Conflict(f"the job has already {row.status}")
        with self.engines.write.begin() as conn:
            repo.request_cancel(conn, job_id, now=utcnow())
        cancelled = self.get(job_id)
        assert cancelled is not None
        return cancelled

    def counts_by_status(self) -> dict[str, int]:
        """Jobs per status (every status, zero when absent or when the database is unreachable)."""
        try:
            with self.engines.read.connect() as conn:
                counts = repo.counts_by_status(conn)
        except SQLAlchemyError:
            counts = {}
        return {s: counts.get(s, 0) for s in STATUSES}

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
            kind = self.kinds.get(job.kind)
            if kind is None:
                raise NotFound(f"unknown job kind {job.kind!r}")
            run_id = kind.run(job, progress)
            status = "succeeded"
        except Cancelled:
            status = "cancelled"
        except (JobTimeout, TaskTimeout, DomainError, ValidationError, InvalidFields, NotFound, Unavailable) as exc:
            problem = _failure(exc, job.timeout_s)
        except KeyboardInterrupt:
            _ignore_further_interrupts()
            self._stop_beat(live, beat)
            self._requeue(job_id, attempt)
            raise
        except Exception:
            log.exception("job failed", extra={"job_id": job_id})
            problem = problem_json(500, "the job failed with an internal error")
        finally:  # also when a kind raises SystemExit: a dead job must stop looking alive to the reaper
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
        engines = self.engines
        now = utcnow()
        grace = max(30.0, 5 * s.job_heartbeat_s)
        with engines.read.connect() as conn:
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
            kind = self.kinds.get(job.kind)
            if job.id in overdue_ids:
                status = "failed"
                problem = problem_json(504, f"the job exceeded its timeout of {job.timeout_s:g} s")
            elif job.cancel_requested:
                status, problem = "cancelled", None
            elif kind is not None and kind.idempotent and job.attempts < s.job_max_attempts:
                status, problem = "queued", None
            else:
                status = "failed"
                problem = problem_json(
                    503,
                    f"the worker running this job stopped (no heartbeat for {s.job_stale_after_s:g} s) "
                    f"after {job.attempts} attempt(s)",
                )
            with engines.write.begin() as conn:
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
        """Run ``reap``, then each of ``passes``, every ``job_reaper_interval_s`` in a daemon thread; returns a
        function that stops it."""
        stop = threading.Event()
        interval = self.settings.job_reaper_interval_s

        def loop() -> None:
            while not stop.wait(interval):
                for work in (self.reap, *self.passes):
                    try:
                        work()
                    except Exception:
                        log.exception("reaper pass failed")

        thread = threading.Thread(target=loop, name="estibench-reaper", daemon=True)
        thread.start()

        def stop_reaper() -> None:
            stop.set()
            thread.join(timeout=interval + 5)

        return stop_reaper
