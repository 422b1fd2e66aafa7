"""usecases/jobs.py ``JobQueue``: submitting stores a queued job (or, with an identical stored run, a succeeded one
pointing at it), the per-caller cap of active jobs, who may see and cancel a job."""

from collections.abc import Iterator

import pytest

from tests.factories import admin, principal, stored_run
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.services import Services
from usecases.settings import Settings


@pytest.fixture
def queued(settings: Settings) -> Iterator[Services]:
    """Jobs stay queued (an in-memory queue nobody runs); at most 2 active jobs per caller; keys required."""
    s = Services(settings.model_copy(update={"queue": "memory", "max_jobs_per_key": 2, "require_keys": True}))
    yield s
    s.dispose()


def submit(services: Services, key_id: str | None, tag: int, run_id: str | None = None):
    return services.jobs.submit(
        kind="estimator",
        name="test.slow_sum",
        version="1",
        params_json=f'{{"tag":{tag},"values":[1.0]}}',
        api_key_id=key_id,
        client="10.0.0.1",
        existing_run_id=run_id,
    )


def test_jobs_queue_up_to_the_callers_cap_and_an_identical_run_succeeds_at_once(queued: Services) -> None:
    alice = principal(queued, "estimators:run", name="alice")
    jobs = [submit(queued, alice.key_id, i) for i in range(2)]
    assert [(j.status, j.attempts, j.progress_fraction) for j in jobs] == [("queued", 0, 0.0)] * 2
    with pytest.raises(QuotaExceeded):
        submit(queued, alice.key_id, 2)
    run = stored_run(queued, alice)
    done = submit(queued, alice.key_id, 3, run_id=run.id)  # not counted: nothing to queue
    assert (done.status, done.run_id, done.progress_fraction) == ("succeeded", run.id, 1.0)
    assert submit(queued, principal(queued, "estimators:run").key_id, 4).status == "queued"  # another caller
    assert queued.jobs.queue_depth() == 3


def test_a_key_sees_and_cancels_only_its_own_jobs(queued: Services) -> None:
    alice = principal(queued, "estimators:run", name="alice")
    bob = principal(queued, "estimators:run", name="bob")
    job = submit(queued, alice.key_id, 0)
    assert queued.jobs.visible(alice, job.id).id == job.id
    assert queued.jobs.visible(admin(queued), job.id).id == job.id
    with pytest.raises(NotFound):
        queued.jobs.visible(bob, job.id)  # with REQUIRE_KEYS another key's job does not exist for bob
    with pytest.raises(Unauthorized):
        queued.jobs.visible(None, job.id)
    cancelled = queued.jobs.cancel(alice, job.id, None)
    assert cancelled.status == "cancelled" and cancelled.cancel_requested is True
    done = submit(queued, alice.key_id, 1, run_id=stored_run(queued, alice).id)
    with pytest.raises(Conflict):
        queued.jobs.cancel(alice, done.id, None)


def test_an_anonymous_job_is_cancelled_from_its_own_address_or_by_an_admin(settings: Settings) -> None:
    services = Services(settings.model_copy(update={"queue": "memory"}))
    try:
        job = submit(services, None, 0)
        with pytest.raises(Forbidden):
            services.jobs.cancel(None, job.id, "10.0.0.2")
        assert services.jobs.cancel(None, job.id, "10.0.0.1").status == "cancelled"
    finally:
        services.dispose()


def test_no_queue_no_jobs(services: Services) -> None:
    with pytest.raises(Unavailable):
        submit(services, None, 0)
