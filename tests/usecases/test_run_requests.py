"""The one run use case (usecases/run_requests.py) tested directly, without HTTP: one cache key, and every producer
of runs (the estimator and scorer calls, ``POST /v1/jobs``, the job kinds, reproduction steps, re-scoring) obeys
the same cost caps and the same concurrency slot (docs/architecture.md, "The one run path")."""

import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterator

import pytest

from service.registry import ESTIMATORS, SCORERS
from tests import support_estimators
from tests.factories import film_key_items, film_predictions, principal, stored_benchmark
from usecases import benchmarks, budgets, reproductions, run_requests, submissions
from usecases.errors import InvalidFields, Unavailable
from usecases.run_requests import Answered, Queued, RunRequest
from usecases.services import Services
from usecases.settings import Settings

SLOW = support_estimators.NAME


@pytest.fixture
def services(settings: Settings, test_estimator: str) -> Iterator[Services]:
    """Services with an in-memory job queue, one synchronous slot and a short wait for it."""
    s = Services(settings.model_copy(update={"queue": "memory", "sync_concurrency": 1, "sync_wait_s": 0.05}))
    yield s
    s.dispose()


def slow_request(services: Services, key_id: str | None = None, **params: object) -> RunRequest:
    spec = ESTIMATORS[SLOW]
    body = json.dumps({"values": [1.0, 2.0], **params}).encode()
    return run_requests.make_request(spec, run_requests.parse(spec.params_model, body), key_id)


@dataclasses.dataclass
class HeldSlot:
    """The process's only synchronous slot, held by the test until ``release()``."""

    release: threading.Event
    thread: threading.Thread


@pytest.fixture
def held_slot(services: Services) -> Iterator[HeldSlot]:
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with budgets.sync_slot(services, large=False):
            taken.set()
            release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(30)
    held = HeldSlot(release, thread)
    yield held
    release.set()
    thread.join(30)


def test_the_cache_key_is_kind_name_version_and_the_sha256_of_the_sorted_compact_params(services: Services) -> None:
    a = slow_request(services, steps=2)
    spec = ESTIMATORS[SLOW]
    reordered = run_requests.parse(spec.params_model, b'{"steps": 2, "values": [1.0, 2.0]}')
    b = run_requests.make_request(spec, reordered, None)
    canonical = json.dumps(
        {"matrix": None, "step_s": 0.0, "steps": 2, "tag": 0, "values": [1.0, 2.0]},
        sort_keys=True,
        separators=(",", ":"),
    )
    assert a.params_json == b.params_json == canonical
    assert a.key == b.key == ("estimator", SLOW, "1", hashlib.sha256(canonical.encode()).hexdigest())


def test_a_call_over_the_hard_cap_is_refused_by_every_producer(services: Services) -> None:
    over = slow_request(services, steps=700, step_s=1.0)  # 700 s > hard cap 600 s
    for produce in (
        lambda: run_requests.run(services, over, client=None),
        lambda: run_requests.run(services, over, client=None, in_job=True),
        lambda: run_requests.queue(services, over, client=None),
        lambda: reproductions._run_step(
            services, SLOW, {"values": [1.0], "steps": 700, "step_s": 1.0}, lambda *a: None
        ),
    ):
        with pytest.raises(InvalidFields) as refused:
            produce()
        assert refused.value.errors[0]["type"] == "cost_cap"
        assert refused.value.errors[0]["msg"] == "cost 700 > hard_cap 600 seconds"


def test_over_the_budget_a_call_becomes_a_job_and_inside_a_job_runs_there(services: Services) -> None:
    over = slow_request(services, steps=2, step_s=0.3)  # 0.6 s > sync budget 0.5 s
    queued = run_requests.run(services, over, client="1.2.3.4")
    assert isinstance(queued, Queued) and queued.job.status == "queued"
    inside = run_requests.run(services, over, client=None, in_job=True)
    assert isinstance(inside, Answered) and not inside.cached
    assert json.loads(inside.run.result) == {"total": 3.0, "n": 2, "steps": 2}
    again = run_requests.run(services, over, client=None)
    assert isinstance(again, Answered) and again.cached and again.run.id == inside.run.id


def test_without_a_queue_over_the_budget_is_a_422_naming_the_budget(settings: Settings, test_estimator: str) -> None:
    services = Services(settings.model_copy(update={"queue": "off"}))
    with pytest.raises(InvalidFields) as refused:
        run_requests.run(services, slow_request(services, steps=2, step_s=0.3), client=None)
    assert refused.value.errors[0]["type"] == "cost_budget"


def test_the_job_kind_runs_its_request_in_the_job_without_a_nested_job(services: Services) -> None:
    over = slow_request(services, steps=2, step_s=0.3)
    job = run_requests.queue(services, over, client=None)
    services.jobs.execute(job.id)
    done = services.jobs.get(job.id)
    assert done is not None and done.status == "succeeded", done
    assert services.jobs.counts_by_status()["queued"] == 0


def test_a_synchronous_call_waits_for_a_slot_then_is_503(services: Services, held_slot: HeldSlot) -> None:
    with pytest.raises(Unavailable):
        run_requests.run(services, slow_request(services, tag=1), client=None)
    spec = SCORERS["film_mcq"]
    body = {"answer_key": {"items": film_key_items()}, "predictions": film_predictions(3)}
    scoring = run_requests.make_request(
        spec, run_requests.parse(run_requests.score_request_model(spec), json.dumps(body).encode()), None
    )
    with pytest.raises(Unavailable):
        run_requests.run(services, scoring, client=None)
    held_slot.release.set()
    held_slot.thread.join(30)
    answered = run_requests.run(services, scoring, client=None)
    assert isinstance(answered, Answered)
    assert json.loads(answered.run.result)["scores"]["accuracy"]["value"] == pytest.approx(3 / 14)


def test_work_inside_a_job_waits_for_the_slot_instead_of_failing(services: Services, held_slot: HeldSlot) -> None:
    done: list[object] = []
    inside = threading.Thread(
        target=lambda: done.append(run_requests.run(services, slow_request(services, tag=2), client=None, in_job=True))
    )
    inside.start()
    inside.join(0.3)
    assert inside.is_alive() and not done  # blocked on the slot, not refused
    held_slot.release.set()
    inside.join(30)
    assert isinstance(done[0], Answered) and json.loads(done[0].run.result)["total"] == 3.0


def test_a_keyed_run_is_never_answered_to_another_caller(services: Services) -> None:
    alice, bob = (principal(services, "estimators:run").key_id for _ in range(2))
    first = run_requests.run(services, slow_request(services, alice, tag=3), client=None)
    assert isinstance(first, Answered) and not first.cached and first.run.api_key_id == alice
    for caller in (bob, None):
        other = run_requests.run(services, slow_request(services, caller, tag=3), client=None)
        assert isinstance(other, Answered) and other.cached
        assert other.run.id != first.run.id and other.run.api_key_id == caller
        assert other.run.result == first.run.result and other.run.params == first.run.params
    mine = run_requests.run(services, slow_request(services, alice, tag=3), client=None)
    assert isinstance(mine, Answered) and mine.run.id == first.run.id
    # an anonymous run now exists: a third key gets that one, shared
    carol = principal(services, "estimators:run").key_id
    shared = run_requests.run(services, slow_request(services, carol, tag=3), client=None)
    assert isinstance(shared, Answered) and shared.run.api_key_id is None


def test_re_scoring_scores_under_the_slot_and_submissions_are_refused_while_it_is_held(
    services: Services, held_slot: HeldSlot
) -> None:
    owner = principal(services, "benchmarks:write", "submissions:write")
    bench = stored_benchmark(services, owner)
    new = submissions.NewSubmission("m", film_predictions(4)["items"], {})
    with pytest.raises(Unavailable):
        submissions.submit(services, owner, bench.row.id, new, None)
    done: list[int] = []
    rescoring = threading.Thread(target=lambda: done.append(benchmarks.rescore_all(services, bench.row.id)))
    held_slot.release.set()
    held_slot.thread.join(30)
    submissions.submit(services, owner, bench.row.id, new, None)
    with budgets.sync_slot(services, large=False):
        rescoring.start()
        rescoring.join(0.3)
        assert rescoring.is_alive() and not done  # waits for the slot inside its job
    rescoring.join(30)
    assert done == [1]
