"""usecases/run_requests.py, from a request to a run: the cost from the stored shapes (nothing loaded) and again
from the loaded arrays, the budget and cap decisions at their boundaries, the slot taken (large or not, waiting
inside a job), what is answered from the store, a job's fields, and the job kinds. A test estimator whose cost is
its ``tag`` / 100 plus the sum of its values makes each cost exact. Written for the mutation run of
``usecases.run_requests``."""

import dataclasses
import hashlib
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from db.repositories.runs import RunRow
from service.errors import InvalidInput
from service.registry import ESTIMATORS, SCORERS
from service.types import ArrayRef, StrictModel
from tests import support_estimators
from tests.factories import admin, film_key_items, film_predictions, principal
from usecases import arrays, budgets, run_requests, runs
from usecases.api_keys import Principal
from usecases.errors import InvalidFields
from usecases.run_requests import Answered, Queued, RunRequest
from usecases.services import Services
from usecases.settings import Settings

PRICED = "test.priced_sum"


def priced(params: Any) -> float:
    return params.tag / 100 + float(np.sum(params.values))


@pytest.fixture
def priced_estimator(test_estimator: str) -> str:
    """``test.slow_sum`` under another name, costing tag / 100 + sum(values) seconds (budget 0.5, cap 600)."""
    ESTIMATORS[PRICED] = dataclasses.replace(support_estimators.SPEC, name=PRICED, cost=priced)
    return PRICED


def make_services(settings: Settings, **update: Any) -> Services:
    return Services(settings.model_copy(update={"queue": "memory", "sync_wait_s": 0.05, **update}))


@pytest.fixture
def services(settings: Settings, priced_estimator: str) -> Iterator[Services]:
    s = make_services(settings)
    yield s
    s.dispose()


@pytest.fixture
def no_queue(settings: Settings, priced_estimator: str) -> Iterator[Services]:
    s = make_services(settings, queue="off")
    yield s
    s.dispose()


def request(key_id: str | None = None, values: Any = (0.0,), **params: Any) -> RunRequest:
    spec = ESTIMATORS[PRICED]
    values = list(values) if isinstance(values, tuple) else values
    return run_requests.make_request(spec, spec.params_model.model_validate({"values": values, **params}), key_id)


def upload(services: Services, values: np.ndarray, owner: Principal | None = None) -> dict[str, str]:
    buf = io.BytesIO()
    np.save(buf, values)
    sha = hashlib.sha256(buf.getvalue()).hexdigest()
    arrays.store_array(services, sha, values.dtype, values.shape, values.tobytes(), owner)
    return {"array": f"sha256:{sha}"}


@pytest.fixture
def slots(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, bool]]:
    """The (large, wait) of every synchronous slot taken."""
    taken: list[tuple[bool, bool]] = []
    real = budgets.sync_slot

    @contextmanager
    def recording(services: Services, *, large: bool, wait: bool = False) -> Iterator[None]:
        taken.append((large, wait))
        with real(services, large=large, wait=wait):
            yield

    monkeypatch.setattr(budgets, "sync_slot", recording)
    return taken


def stored_count(services: Services) -> int:
    return len(runs.list_runs(services, admin(services), kind=None, name=None, limit=100, cursor=None).items)


# --- the cost --------------------------------------------------------------------------------------------------


def test_the_checked_cost_comes_from_the_stored_shapes_without_loading(services: Services) -> None:
    alice = principal(services, "estimators:run")
    ref = upload(services, np.array([3.0, 4.0]), alice)
    at = run_requests.checked_cost(services, request(alice.key_id, ref, tag=7), queue_available=False)
    assert at == 0.07  # the stand-in of the upload is zeros: only the tag counts
    assert run_requests.checked_cost(services, request(None, (1.0, 2.0), tag=50), queue_available=True) == 3.5
    with pytest.raises(InvalidInput) as missing:  # bob may not use alice's upload
        run_requests.checked_cost(services, request(principal(services, "x").key_id, ref), queue_available=True)
    assert missing.value.loc == ("values",)


def test_the_checked_cost_is_refused_above_the_caps_at_the_body(services: Services) -> None:
    def error(r: RunRequest, queue_available: bool) -> tuple[list[Any], str]:
        with pytest.raises(InvalidFields) as err:
            run_requests.checked_cost(services, r, queue_available=queue_available)
        (e,) = err.value.errors
        return e["loc"], e["type"]

    assert error(request(values=(600.5,)), True) == (["body"], "cost_cap")
    assert error(request(tag=51), False) == (["body"], "cost_budget")
    assert run_requests.checked_cost(services, request(tag=51), queue_available=True) == 0.51
    assert run_requests.checked_cost(services, request(tag=50), queue_available=False) == 0.5


def test_a_scorers_cost_counts_its_items_and_refuses_a_repeated_key_item(services: Services) -> None:
    spec = SCORERS["film_mcq"]
    model = run_requests.score_request_model(spec)
    body = {"answer_key": {"items": film_key_items(6, 2)}, "predictions": {"items": film_predictions(1)["items"][:3]}}
    r = run_requests.make_request(spec, model.model_validate(body), None)
    assert run_requests.checked_cost(services, r, queue_available=False) == 11.0  # 8 key items + 3 predictions
    twice = film_key_items(3, 0) + film_key_items(2, 0)[1:]
    r = run_requests.make_request(spec, model.model_validate({**body, "answer_key": {"items": twice}}), None)
    with pytest.raises(InvalidInput) as repeated:
        run_requests.checked_cost(services, r, queue_available=False)
    assert repeated.value.loc == ("answer_key", "items", 3, "item_id")


class Masked(StrictModel):
    item_id: str
    values: ArrayRef | None = None


class Part(StrictModel):
    items: list[Masked]


class MaskedRequest(StrictModel):
    answer_key: Part
    predictions: Part


def test_a_scorers_item_arrays_are_resolved_in_both_parts_or_stood_in_by_their_shapes(services: Services) -> None:
    alice = principal(services, "estimators:run")
    key_ref, pred_ref = upload(services, np.arange(3.0), alice), upload(services, np.ones(4), alice)
    params = MaskedRequest.model_validate(
        {
            "answer_key": {"items": [{"item_id": "a", "values": key_ref}, {"item_id": "b"}]},
            "predictions": {"items": [{"item_id": "a"}, {"item_id": "b", "values": pred_ref}]},
        }
    )
    spec = SCORERS["film_mcq"]
    shaped = run_requests._resolved(services, spec, params, alice.key_id, shapes_only=True)
    key_stand_in, pred_stand_in = shaped.answer_key.items[0].values, shaped.predictions.items[1].values
    assert key_stand_in.shape == (3,) and not key_stand_in.any()
    assert pred_stand_in.shape == (4,) and not pred_stand_in.any()
    loaded = run_requests._resolved(services, spec, params, alice.key_id, shapes_only=False)
    assert loaded.answer_key.items[0].values.tolist() == [0.0, 1.0, 2.0]
    assert loaded.predictions.items[1].values.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert loaded.answer_key.items[1].values is None and params.answer_key.items[0].values == ArrayRef(**key_ref)
    bob = principal(services, "estimators:run")
    for shapes_only in (True, False):
        with pytest.raises(InvalidInput) as missing:
            run_requests._resolved(services, spec, params, bob.key_id, shapes_only=shapes_only)
        assert missing.value.loc == ("answer_key", "items", 0, "values")
    only_pred = params.model_copy(update={"answer_key": Part(items=[Masked(item_id="a")])})
    with pytest.raises(InvalidInput) as missing:
        run_requests._resolved(services, spec, only_pred, bob.key_id, shapes_only=True)
    assert missing.value.loc == ("predictions", "items", 1, "values")


def test_a_scorers_cost_is_given_its_params(services: Services) -> None:
    spec = SCORERS["ubench"]
    items = [{"item_id": f"c{i}", "mask": [[0, 1, 1], [1, 0, 0]]} for i in range(3)]
    body = {"answer_key": {"items": items}, "predictions": {"items": items[:2]}}
    model = run_requests.score_request_model(spec)
    costs = {}
    for hd95 in (True, False):
        params = model.model_validate({**body, "params": {"hd95": hd95}})
        costs[hd95] = run_requests.checked_cost(
            services, run_requests.make_request(spec, params, None), queue_available=True
        )
        assert costs[hd95] == spec.cost(params.answer_key.items, params.predictions.items, params.params)
    assert costs[True] > costs[False] > 0


def test_a_keyed_upload_is_loaded_for_its_key(services: Services) -> None:
    alice = principal(services, "estimators:run")
    ref = upload(services, np.array([0.125, 0.25]), alice)
    answered = run_requests.run(services, request(alice.key_id, ref), client=None)
    assert isinstance(answered, Answered) and json.loads(answered.run.result)["total"] == 0.375


# --- run -------------------------------------------------------------------------------------------------------


def test_a_remembered_run_is_answered_without_the_store(services: Services) -> None:
    k = request(tag=1).key
    row = RunRow(1, "remembered-id", *k[:3], "c", "{}", k[3], "{}", 1.0, datetime(2026, 1, 1, tzinfo=UTC), None)
    answered = run_requests.run(services, dataclasses.replace(request(tag=1), remembered=row), client=None)
    assert answered == Answered(row, True)
    assert stored_count(services) == 0


def test_a_stored_run_is_answered_and_another_keys_run_is_reused(services: Services) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    first = run_requests.run(services, request(alice.key_id, tag=2), client=None)
    assert isinstance(first, Answered) and not first.cached and first.run.api_key_id == alice.key_id
    assert json.loads(first.run.result) == {"total": 0.0, "n": 1, "steps": 1}
    again = run_requests.run(services, request(alice.key_id, tag=2), client=None)
    assert again == Answered(first.run, True)
    reused = run_requests.run(services, request(bob.key_id, tag=2), client=None)
    assert isinstance(reused, Answered) and reused.cached and reused.run.api_key_id == bob.key_id
    assert reused.run.id != first.run.id and reused.run.result == first.run.result
    assert stored_count(services) == 2


def test_a_run_at_the_budget_is_synchronous_and_above_it_a_job(services: Services, slots: list[Any]) -> None:
    at = run_requests.run(services, request(tag=50), client=None)
    assert isinstance(at, Answered) and at.cached is False
    alice = principal(services, "estimators:run")
    over = run_requests.run(services, request(alice.key_id, tag=51), client="1.2.3.4")
    assert isinstance(over, Queued)
    job = over.job
    assert (job.kind, job.name, job.version, job.status, job.run_id) == ("estimator", PRICED, "1", "queued", None)
    assert (job.params, job.api_key_id, job.client) == (request(tag=51).params_json, alice.key_id, "1.2.3.4")
    inside = run_requests.run(services, request(tag=51), client=None, in_job=True)
    assert isinstance(inside, Answered) and not inside.cached
    assert slots == [(True, False), (True, True)]


def test_the_slot_is_large_from_a_tenth_of_the_budget_and_waits_inside_a_job(
    services: Services, slots: list[Any]
) -> None:
    run_requests.run(services, request(tag=5), client=None)
    run_requests.run(services, request(tag=4), client=None)
    run_requests.run(services, request(tag=3), client=None, in_job=True)
    assert slots == [(True, False), (False, False), (False, True)]


def test_the_cost_is_checked_again_on_the_loaded_arrays(services: Services, slots: list[Any]) -> None:
    ref = upload(services, np.array([0.25, 0.5]))
    over = run_requests.run(services, request(None, ref), client="c")
    assert isinstance(over, Queued) and json.loads(over.job.params)["values"] == ref and over.job.client == "c"
    assert slots == [(False, False)]  # the shapes cost nothing: the slot was taken before the arrays were loaded
    inside = run_requests.run(services, request(None, ref), client=None, in_job=True)
    assert isinstance(inside, Answered) and json.loads(inside.run.result)["total"] == 0.75
    at = run_requests.run(services, request(None, upload(services, np.array([0.125, 0.375]))), client=None)
    assert isinstance(at, Answered)  # 0.5: at the budget
    capped = upload(services, np.array([600.5]))
    for in_job in (False, True):
        with pytest.raises(InvalidFields) as refused:
            run_requests.run(services, request(None, capped), client=None, in_job=in_job)
        (e,) = refused.value.errors
        assert (e["loc"], e["type"]) == (["body"], "cost_cap")


def test_without_a_queue_a_job_still_runs_over_the_budget_and_a_call_is_refused(no_queue: Services) -> None:
    inside = run_requests.run(no_queue, request(tag=60), client=None, in_job=True)
    assert isinstance(inside, Answered)
    with pytest.raises(InvalidFields) as refused:
        run_requests.run(no_queue, request(tag=61), client=None)
    (e,) = refused.value.errors
    assert (e["loc"], e["type"]) == (["body"], "cost_budget")


def test_progress_reaches_the_estimator_and_a_scorer_reports_scoring(services: Services) -> None:
    seen: list[tuple[float, str]] = []
    run_requests.run(services, request(tag=8, steps=2), client=None, progress=lambda f, m="": seen.append((f, m)))
    assert seen == [(0.5, "step 1 of 2"), (1.0, "step 2 of 2")]
    spec = SCORERS["film_mcq"]
    body = {"answer_key": {"items": film_key_items()}, "predictions": film_predictions(7)}
    scoring = run_requests.make_request(spec, run_requests.score_request_model(spec).model_validate(body), None)
    seen.clear()
    answered = run_requests.run(services, scoring, client=None, progress=lambda f, m="": seen.append((f, m)))
    assert seen == [(0.1, "scoring")]
    assert isinstance(answered, Answered)
    assert json.loads(answered.run.result)["scores"]["accuracy"]["value"] == pytest.approx(7 / 14)


# --- queue and the job kinds -----------------------------------------------------------------------------------


def test_queue_takes_any_cost_below_the_cap_and_answers_a_stored_run_at_once(services: Services) -> None:
    alice = principal(services, "estimators:run")
    job = run_requests.queue(services, request(alice.key_id, tag=70), client="9.9.9.9")
    assert (job.status, job.run_id, job.api_key_id, job.client) == ("queued", None, alice.key_id, "9.9.9.9")
    assert (job.kind, job.name, job.version, job.params) == ("estimator", PRICED, "1", request(tag=70).params_json)
    stored = run_requests.run(services, request(alice.key_id, tag=3), client=None)
    assert isinstance(stored, Answered)
    done = run_requests.queue(services, request(alice.key_id, tag=3), client=None)
    assert (done.status, done.run_id) == ("succeeded", stored.run.id)
    bob = principal(services, "estimators:run")
    reused = run_requests.queue(services, request(bob.key_id, tag=3), client=None)
    copy = runs.get_run(services, bob, reused.run_id)  # type: ignore[arg-type]
    assert reused.status == "succeeded" and copy.api_key_id == bob.key_id and copy.id != stored.run.id
    with pytest.raises(InvalidFields):
        run_requests.queue(services, request(values=(600.5,)), client=None)
    anonymous = run_requests.run(services, request(None, tag=3), client=None)
    assert isinstance(anonymous, Answered) and anonymous.run.api_key_id is None
    again = run_requests.queue(services, request(alice.key_id, tag=3), client=None)
    assert again.run_id == stored.run.id  # alice's own run, not the anonymous one


def test_a_job_kind_runs_its_request_inside_the_job(services: Services, slots: list[Any]) -> None:
    alice = principal(services, "estimators:run")
    job = run_requests.queue(services, request(alice.key_id, tag=90, steps=2), client=None)
    seen: list[float] = []
    run_id = run_requests.run_job(services, job, lambda f, m="": seen.append(f))
    assert seen == [0.5, 1.0] and slots == [(True, True)]
    row = runs.get_run(services, alice, run_id)
    assert (row.params, row.api_key_id, row.kind, row.name) == (job.params, alice.key_id, "estimator", PRICED)
    assert row.params_sha256 == hashlib.sha256(job.params.encode()).hexdigest()
    assert run_requests.run_job(services, job, lambda f, m="": None) == run_id  # found stored the second time
    scored = run_requests.request_from_job_body(
        services,
        json.dumps(
            {
                "kind": "scorer",
                "name": "film_mcq",
                "params": {"answer_key": {"items": film_key_items()}, "predictions": film_predictions(4)},
            }
        ).encode(),
        None,
    )
    scorer_job = run_requests.queue(services, scored, client=None)
    scorer_run = runs.get_run(services, None, run_requests.run_job(services, scorer_job, lambda f, m="": None))
    assert json.loads(scorer_run.result)["scores"]["accuracy"]["value"] == pytest.approx(4 / 14)
