"""The job worker entry point, ``python -m worker``: a Huey consumer with ``ESTIBENCH_WORKERS`` process workers
over the use-case layer (it never imports the API).

It reads the same ``ESTIBENCH_*`` settings as the API (database, queue storage). SIGINT stops it gracefully
(running jobs finish); SIGTERM interrupts running jobs, which go back on the queue and run again on the next start.
Run more of these on other machines against a shared PostgreSQL database and ``ESTIBENCH_REDIS_URL``.
"""

import logging
import sys

from huey.consumer import Consumer

from service.registry import load_all
from usecases import logs
from usecases.services import Services
from usecases.settings import Settings


def make_consumer(settings: Settings) -> Consumer:
    if settings.queue != "auto":
        raise SystemExit(f"ESTIBENCH_QUEUE={settings.queue!r}: a worker needs the shared queue ('auto')")
    services = Services(settings)
    services.jobs.enqueue_interrupted()
    services.dispose()
    return services.jobs.huey.create_consumer(
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
