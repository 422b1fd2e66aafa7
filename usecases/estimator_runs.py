"""Running an estimator, the one entry path of every estimator call: validate and canonicalise the params, check
the credentials, look the run up once, then answer from the store, queue a job (over the synchronous budget)
or compute and store the run. The request path is walked in docs/architecture.md."""

from __future__ import annotations

import ctypes
import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from pydantic import ValidationError

from db.repositories.jobs import JobRow
from db.repositories.runs import RunRow
from service.registry import ESTIMATORS, EstimatorSpec, Progress, ScorerSpec, no_progress
from service.types import StrictModel
from usecases import arrays, json_bounds, runs
from usecases.api_keys import Principal, authenticate, require_for_runs
from usecases.errors import InvalidFields, NotFound, Unavailable, invalid
from usecases.runs import CacheKey

if TYPE_CHECKING:
    from usecases.services import Services


@dataclass(frozen=True)
class EstimatorCall:
    """A validated, authorised estimator call: its canonical params, cache key, caller, and the stored run with
    that key if this process already holds it in memory."""

    spec: EstimatorSpec
    params: StrictModel
    params_json: str
    key: CacheKey
    principal: Principal | None
    remembered: RunRow | None

    @property
    def api_key_id(self) -> str | None:
        return self.principal.key_id if self.principal else None


def estimator(name: str) -> EstimatorSpec:
    spec = ESTIMATORS.get(name)
    if spec is None:
        raise NotFound(f"no estimator named {name!r}")
    return spec


def parse_params(model: type[StrictModel], body: bytes, loc: tuple[str, ...] = ("body",)) -> StrictModel:
    """Validate a JSON params object (JSON mode, strict); errors are located under ``loc``. Undecodable JSON is
    ``malformed`` (400); anything else that fails is a 422 naming the fields. A large body first passes the
    structural pre-check of ``json_bounds`` (values per nesting depth within the model's bounds)."""
    json_bounds.check(model, body, loc)
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        errors = [
            {"loc": [*loc, *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False, include_context=False, include_input=False)
        ]
        if any(e["type"] == "json_invalid" for e in errors):
            raise InvalidFields("The body is not valid JSON.", errors, malformed=True) from exc
        raise InvalidFields("The request failed validation.", errors) from exc


def open_call(services: Services, spec: EstimatorSpec, body: bytes, token: str | None) -> EstimatorCall:
    """Authenticate ``token`` (a present but invalid one is ``Unauthorized``, cached answer or not, whatever the
    body), validate and canonicalise ``body`` and look the run up in this process's memory. Touches the database
    only to check a presented token, so without one it is safe on the event loop."""
    principal = require_for_runs(services, authenticate(services, token))
    params = parse_params(spec.params_model, body)
    params_json = runs.canonical_params(params)
    key: CacheKey = ("estimator", spec.name, spec.version, runs.sha256_hex(params_json))
    return EstimatorCall(spec, params, params_json, key, principal, runs.remembered_run(services.engines, key))


def check_caps(spec: EstimatorSpec | ScorerSpec, cost: float, *, queue_available: bool, loc: tuple[str, ...]) -> float:
    """Return ``cost``, or raise ``InvalidFields`` naming the cap (``hard_cap``; ``sync_budget`` without a queue)."""
    unit = spec.cost_unit
    if cost > spec.hard_cap:
        raise invalid(
            f"cost {cost:.4g} {unit} exceeds the hard cap {spec.hard_cap:.4g} of {spec.name}",
            loc,
            "cost_cap",
            f"cost {cost:.4g} > hard_cap {spec.hard_cap:.4g} {unit}",
        )
    if cost > spec.sync_budget and not queue_available:
        raise invalid(
            f"cost {cost:.4g} {unit} exceeds the synchronous budget {spec.sync_budget:.4g} of {spec.name}; "
            "no job queue is configured",
            loc,
            "cost_budget",
            f"cost {cost:.4g} > sync_budget {spec.sync_budget:.4g} {unit}",
        )
    return cost


def check_cost(spec: EstimatorSpec, params: StrictModel, *, queue_available: bool, loc: tuple[str, ...]) -> float:
    """The estimator's cost for ``params`` (references resolved), checked against its caps (``check_caps``)."""
    return check_caps(spec, float(spec.cost(params)), queue_available=queue_available, loc=loc)


@dataclass(frozen=True)
class Answered:
    """The call's run and whether it was already stored."""

    run: RunRow
    cached: bool


@dataclass(frozen=True)
class Queued:
    """The call costs more than the synchronous budget: this job computes it."""

    job: JobRow


def complete_call(services: Services, call: EstimatorCall, client: str | None) -> Answered | Queued:
    """Finish an opened call (blocking: run it in a worker thread): the stored run if there is one (the one
    database lookup of the call), else the cost decision, then a job or a new run computed and stored now."""
    engines = services.engines
    stored = call.remembered or runs.stored_run(engines, call.key)
    if stored is not None:
        return Answered(stored, True)
    resolved = arrays.resolve(engines, call.params)
    cost = check_cost(call.spec, resolved, queue_available=services.jobs.available, loc=("body",))
    if cost > call.spec.sync_budget:
        return Queued(_submit(services, call, client, existing_run_id=None))
    with sync_slot(services, large=cost >= 0.1 * call.spec.sync_budget):
        row, cached = runs.compute_and_store(
            engines, call.key, call.params_json, lambda: call.spec.fn(resolved, no_progress), call.api_key_id
        )
    return Answered(row, cached)


_slots: WeakKeyDictionary[Services, threading.BoundedSemaphore] = WeakKeyDictionary()
_slots_lock = threading.Lock()


def _libc_malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _libc_malloc_trim()


@contextmanager
def sync_slot(services: Services, *, large: bool) -> Iterator[None]:
    """Hold one of ``sync_concurrency`` slots of this process for a synchronous computation, waiting at most
    ``sync_wait_s`` (then ``Unavailable``, 503 with Retry-After); after a ``large`` one, give freed heap memory
    back to the system (glibc ``malloc_trim``)."""
    settings = services.settings
    with _slots_lock:
        slot = _slots.get(services)
        if slot is None:
            slot = _slots[services] = threading.BoundedSemaphore(settings.sync_concurrency)
    if not slot.acquire(timeout=settings.sync_wait_s):
        raise Unavailable(
            f"all {settings.sync_concurrency} synchronous slots are busy; retry shortly, or queue the call as a job "
            "(POST /v1/jobs)",
            retry_after_s=max(1, math.ceil(settings.sync_wait_s)),
        )
    try:
        yield
    finally:
        slot.release()
        if large and _malloc_trim is not None:
            _malloc_trim(0)


def _submit(services: Services, call: EstimatorCall, client: str | None, existing_run_id: str | None) -> JobRow:
    return services.jobs.submit(
        kind="estimator",
        name=call.spec.name,
        version=call.spec.version,
        params_json=call.params_json,
        api_key_id=call.api_key_id,
        client=client,
        existing_run_id=existing_run_id,
    )


def queue_call(
    services: Services, name: str, raw_params: dict, principal: Principal | None, client: str | None
) -> JobRow:
    """``POST /v1/jobs``: queue estimator ``name`` on ``raw_params`` whatever its cost (below the hard cap); a job
    for a stored identical run succeeds at once."""
    require_for_runs(services, principal)
    spec = estimator(name)
    params = parse_params(spec.params_model, json.dumps(raw_params).encode(), ("body", "params"))
    check_cost(spec, arrays.resolve(services.engines, params, ("params",)), queue_available=True, loc=("body",))
    params_json = runs.canonical_params(params)
    key: CacheKey = ("estimator", spec.name, spec.version, runs.sha256_hex(params_json))
    call = EstimatorCall(spec, params, params_json, key, principal, None)
    stored = runs.stored_run(services.engines, key)
    return _submit(services, call, client, existing_run_id=stored.id if stored else None)


def run_job(services: Services, job: JobRow, progress: Progress) -> str:
    """The ``estimator`` job kind: compute and store the run (or find the identical one stored meanwhile)."""
    spec = estimator(job.name)
    params = spec.params_model.model_validate_json(job.params)
    resolved = arrays.resolve(services.engines, params)
    key: CacheKey = ("estimator", spec.name, spec.version, job.params_sha256)
    row, _ = runs.stored_or_computed(
        services.engines, key, job.params, lambda: spec.fn(resolved, progress), job.api_key_id
    )
    return row.id
