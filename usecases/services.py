"""What every use case works with: settings, the database engines (re-created after a fork), the HMAC secret and
the job queue. Building one opens no connection and creates no file; both entry points (``api.app.create_app``
and the worker) build one from ``Settings``."""

import os
from collections.abc import Callable
from datetime import datetime
from functools import cached_property, partial

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from db.engine import Engines, make_engines
from usecases.benchmarks import run_rescore_job
from usecases.clock import utcnow
from usecases.health import DatabaseProbe
from usecases.jobs import JobKind, JobQueue
from usecases.phases import freeze_due
from usecases.reproductions import run_reproduction_job
from usecases.run_requests import run_job
from usecases.settings import Settings


def job_kinds(services: "Services") -> dict[str, JobKind]:
    """Every kind of job, run on ``services``: ``estimator`` and ``scorer`` runs (re-run after a crash), ``rescore``
    of a benchmark and a paper's ``reproduction`` check (neither re-run)."""
    return {
        "estimator": JobKind(partial(run_job, services)),
        "scorer": JobKind(partial(run_job, services)),
        "rescore": JobKind(partial(run_rescore_job, services), idempotent=False),
        "reproduction": JobKind(partial(run_reproduction_job, services), idempotent=False),
    }


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engines: Engines | None = None
        self._pid = os.getpid()
        self.clock: Callable[[], datetime] = utcnow
        """The current instant as challenge phases read it (a test sets another to move past a phase's end)."""
        self.jobs = JobQueue(settings, lambda: self.engines, job_kinds(self), passes=(partial(freeze_due, self),))

    @property
    def engines(self) -> Engines:
        """The engines of this process (a forked worker process gets its own)."""
        if self._engines is None or self._pid != os.getpid():
            self._engines = make_engines(self.settings.database_url, synchronous=self.settings.sqlite_synchronous)
            self._pid = os.getpid()
        return self._engines

    @cached_property
    def secret_key(self) -> str:
        """The HMAC secret of API keys (in development generated once into ``data_dir/secret_key``)."""
        return self.settings.resolved_secret_key()

    @cached_property
    def database_probe(self) -> DatabaseProbe:
        """The cached database round trip behind ``GET /v1/health``."""
        return DatabaseProbe(self.database_ok)

    def database_ok(self) -> bool:
        """One round trip to the database."""
        try:
            with self.engines.read.connect() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError:
            return False
        return True

    def dispose(self) -> None:
        if self._engines is not None:
            self._engines.dispose()
