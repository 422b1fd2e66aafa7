"""The job worker entry point, ``python -m worker``: a Huey consumer with ``ESTIBENCH_WORKERS`` process workers
over the use-case layer (it never imports the API).

It reads the same ``ESTIBENCH_*`` settings as the API (database, queue storage). SIGINT stops it gracefully
(running jobs finish); SIGTERM interrupts running jobs, which go back on the queue and run again on the next start.
Every child process is killed by the kernel when the consumer dies (``PR_SET_PDEATHSIG``), so no worker outlives
it, and the consumer runs the job reaper too, so a worker-only deployment recovers the jobs of a dead worker.
Run more of these on other machines against a shared PostgreSQL database and ``ESTIBENCH_REDIS_URL``.
"""

import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from huey.consumer import Consumer, ProcessEnvironment

from service.registry import load_all
from usecases import logs
from usecases.services import Services
from usecases.settings import Settings

log = logging.getLogger("estibench.worker")
PR_SET_PDEATHSIG = 1
INTERRUPT_JOIN_S = 30.0


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``); exit at once
    if the parent is already gone. Elsewhere (no ``prctl``) nothing is set."""
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is None:
        return
    if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        log.warning("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
    if os.getppid() != parent_pid:
        os._exit(1)


class OrphanFreeProcesses(ProcessEnvironment):
    """Huey's process environment whose children die with the consumer that forked them."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.parent_pid = os.getpid()

    def init_child(self, process: Any) -> None:
        die_with_parent(self.parent_pid)
        super().init_child(process)

    def interrupt_workers(self, procs: list[Any]) -> None:
        """Huey's interrupt (SIGTERM to each child, then a 1 s join), then up to ``INTERRUPT_JOIN_S`` more for the
        children to put their jobs back: on a loaded machine the re-queue write can take longer than 1 s, and once
        the consumer exits the kernel kills the children (``PR_SET_PDEATHSIG``), leaving the job 'running'."""
        super().interrupt_workers(procs)
        deadline = time.monotonic() + INTERRUPT_JOIN_S
        for proc in procs:
            proc.join(max(deadline - time.monotonic(), 0))


class WorkerConsumer(Consumer):
    """The consumer: orphan-free process workers, and the job reaper in a thread started after the first fork."""

    def __init__(self, services: Services, **options: Any) -> None:
        self.services = services
        self._stop_reaper: Callable[[], None] | None = None
        super().__init__(services.jobs.huey, **options)

    def get_environment(self, worker_type: str) -> Any:
        if worker_type == "process":
            return OrphanFreeProcesses(self._graceful_sig, self._interrupt_sig)
        return super().get_environment(worker_type)

    def start(self) -> None:
        super().start()
        if self.services.settings.job_reaper_interval_s > 0:
            self._stop_reaper = self.services.jobs.start_reaper()

    def run(self) -> None:
        try:
            super().run()
        finally:
            if self._stop_reaper is not None:
                self._stop_reaper()


def make_consumer(settings: Settings) -> WorkerConsumer:
    if settings.queue != "auto":
        raise SystemExit(f"ESTIBENCH_QUEUE={settings.queue!r}: a worker needs the shared queue ('auto')")
    services = Services(settings)
    services.jobs.enqueue_interrupted()
    services.dispose()
    return WorkerConsumer(
        services,
        workers=settings.workers,
        worker_type="process",
        periodic=False,
        initial_delay=0.05,
        backoff=1.5,
        max_delay=0.5,
        check_worker_health=True,
        health_check_interval=2,
    )


def main() -> None:
    settings = Settings()
    logs.configure(settings.log_level, settings.log_json)
    huey_log = logging.getLogger("huey")
    huey_log.handlers[:] = logging.getLogger("estibench").handlers
    huey_log.setLevel(logging.WARNING)
    load_all()
    make_consumer(settings).run()
    sys.exit(0)
