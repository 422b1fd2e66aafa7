"""What every use case works with: settings, the database engines (re-created after a fork), the HMAC secret and
the job queue. Building one opens no connection and creates no file; both entry points (``api.app.create_app``
and the worker) build one from ``Settings``."""

import os
from functools import cached_property

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from db.engine import Engines, make_engines
from usecases.benchmarks import run_rescore_job
from usecases.estimator_runs import run_job
from usecases.health import DatabaseProbe
from usecases.jobs import JobKind, JobQueue
from usecases.reproductions import run_reproduction_job
from usecases.scorer_runs import run_job as run_scorer_job
from usecases.settings import Settings

JOB_KINDS: dict[str, JobKind] = {
    "estimator": JobKind(run_job),
    "scorer": JobKind(run_scorer_job),
    "rescore": JobKind(run_rescore_job, idempotent=False),
    "reproduction": JobKind(run_reproduction_job, idempotent=False),
}
"""Every kind of job: ``estimator`` and ``scorer`` runs (re-run after a crash), ``rescore`` of a benchmark and a paper's
``reproduction`` check (neither re-run)."""


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engines: Engines | None = None
        self._pid = os.getpid()
        self.jobs = JobQueue(self, JOB_KINDS)

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
