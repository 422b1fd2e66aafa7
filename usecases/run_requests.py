"""The one run use case. Every producer of runs (the estimator and scorer routes, ``POST /v1/jobs``, the job kinds
``estimator`` and ``scorer``, reproduction checks, in-process callers) builds a ``RunRequest`` and calls ``run``
(or ``queue``), which owns validation, the canonical params and the cache key, array references, the cost caps,
the concurrency slot, the job decision and storage. The path is walked in docs/architecture.md."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, create_model

from db.repositories.jobs import JobRow
from db.repositories.runs import RunRow
from service.registry import ESTIMATORS, SCORERS, EstimatorSpec, Progress, ScorerSpec, no_progress
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases import arrays, budgets, json_bounds, runs
from usecases.api_keys import Principal, authenticate, require_for_runs
from usecases.errors import InvalidFields, NotFound, invalid
from usecases.runs import CacheKey
from usecases.scoring import ScoreOutcome, check_unique, score_all

if TYPE_CHECKING:
    from usecases.services import Services

Spec = EstimatorSpec | ScorerSpec


def find_spec(kind: str, name: str) -> Spec:
    """The registered estimator or scorer ``name`` (``kind`` is ``estimator`` or ``scorer``)."""
    spec = (ESTIMATORS if kind == "estimator" else SCORERS).get(name)
    if spec is None:
        raise NotFound(f"no {kind} named {name!r}")
    return spec


_REQUEST_MODELS: dict[str, type[StrictModel]] = {}
_REQUEST_MODELS_LOCK = threading.Lock()


def score_request_model(spec: ScorerSpec) -> type[StrictModel]:
    """``{"answer_key":{"items":[...]},"predictions":{"items":[...]},"params":{...}}`` typed for ``spec`` (built
    once per scorer)."""
    with _REQUEST_MODELS_LOCK:
        if spec.name not in _REQUEST_MODELS:
            slug = spec.name.replace(".", "_")
            key = create_model(
                f"{slug}_answer_key",
                __base__=StrictModel,
                items=(list[spec.answer_key_item_model], Field(min_length=1, max_length=MAX_JSON_ARRAY)),
            )
            preds = create_model(
                f"{slug}_predictions",
                __base__=StrictModel,
                items=(list[spec.prediction_item_model], Field(max_length=MAX_JSON_ARRAY)),
            )
            _REQUEST_MODELS[spec.name] = create_model(
                f"{slug}_score_request",
                __base__=StrictModel,
                answer_key=(key, ...),
                predictions=(preds, ...),
                params=(spec.params_model, Field(default_factory=spec.params_model)),
            )
        return _REQUEST_MODELS[spec.name]


def body_model(spec: Spec) -> type[StrictModel]:
    """What a run of ``spec`` takes: an estimator's params, or a scorer's score request."""
    return spec.params_model if isinstance(spec, EstimatorSpec) else score_request_model(spec)


def parse(model: type[StrictModel], body: bytes, loc: tuple[str, ...] = ("body",)) -> StrictModel:
    """Validate a JSON body (JSON mode, strict); errors are located under ``loc``. Undecodable JSON is
    ``malformed`` (400); anything else that fails is a 422 naming the fields. A large body first passes the
    structural pre-check of ``json_bounds`` (values per nesting depth within the model's bounds), and is checked
    and parsed holding the process's one permit for large bodies (``json_bounds.LARGE_BODIES``)."""
    with json_bounds.LARGE_BODIES if len(body) >= json_bounds.MIN_CHECKED_BYTES else nullcontext():
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


def cache_key(spec: Spec, params_json: str) -> CacheKey:
    """The cache key of a run of ``spec`` on these canonical params: (kind, name, version, SHA-256)."""
    return (spec.kind, spec.name, spec.version, runs.sha256_hex(params_json))


@dataclass(frozen=True)
class RunRequest:
    """A validated run of ``spec``: its params (an estimator's params or a scorer's score request), their
    canonical JSON and cache key, the key that asks for it, and the stored run if this process already holds it."""

    spec: Spec
    params: StrictModel
    params_json: str
    key: CacheKey
    api_key_id: str | None
    remembered: RunRow | None = None


def make_request(spec: Spec, params: StrictModel, api_key_id: str | None) -> RunRequest:
    """The request for already validated ``params``."""
    params_json = runs.canonical_params(params)
    return RunRequest(spec, params, params_json, cache_key(spec, params_json), api_key_id)


_BODY_KEYS: OrderedDict[tuple[str, str, str], tuple[str, CacheKey]] = OrderedDict()
_BODY_KEYS_SIZE = 4096
_BODY_KEYS_LOCK = threading.Lock()
"""Per process: (kind, name, SHA-256 of a body that validated) → (canonical params, cache key), so a repeated body
finds its run without being parsed again (a body that validated once always validates to the same params)."""


def _body_digest(spec: Spec, body: bytes) -> tuple[str, str, str]:
    return (spec.kind, f"{spec.name}@{spec.version}", hashlib.sha256(body).hexdigest())


def _known_body(spec: Spec, body: bytes) -> tuple[str, CacheKey] | None:
    digest = _body_digest(spec, body)
    with _BODY_KEYS_LOCK:
        found = _BODY_KEYS.get(digest)
        if found is not None:
            _BODY_KEYS.move_to_end(digest)
        return found


def _learn_body(spec: Spec, body: bytes, request: RunRequest) -> None:
    with _BODY_KEYS_LOCK:
        _BODY_KEYS[_body_digest(spec, body)] = (request.params_json, request.key)
        if len(_BODY_KEYS) > _BODY_KEYS_SIZE:
            _BODY_KEYS.popitem(last=False)


@dataclass(frozen=True)
class Remembered:
    """A call answered from this process's memory without parsing its body: the run and the caller's key."""

    run: RunRow
    api_key_id: str | None


def open_request(
    services: Services, spec: Spec, body: bytes, token: str | None, loc: tuple[str, ...] = ("body",)
) -> RunRequest | Remembered:
    """Authenticate ``token`` (a present but invalid one is ``Unauthorized``, cached answer or not), then answer a
    body seen before from memory, or validate and canonicalise it and look its run up in memory. Touches the
    database only to check a presented token, so without one it is safe on the event loop for a small body."""
    principal = require_for_runs(services, authenticate(services, token))
    api_key_id = principal.key_id if principal else None
    known = _known_body(spec, body)
    if known is not None:
        found = runs.remembered_run(services.engines, known[1], api_key_id)
        if found is not None:
            return Remembered(found, api_key_id)
    request = make_request(spec, parse(body_model(spec), body, loc), api_key_id)
    _learn_body(spec, body, request)
    found = runs.remembered_run(services.engines, request.key, api_key_id)
    return request if found is None else replace(request, remembered=found)


class JobTarget(StrictModel):
    """What ``POST /v1/jobs`` runs (the members of its body beside ``params``)."""

    kind: Literal["estimator", "scorer"]
    name: str = Field(min_length=1, max_length=128)


class JobBody(JobTarget):
    """The whole body of ``POST /v1/jobs``, validated at once only when it cannot be split into its members."""

    params: dict[str, Any] = Field(default_factory=dict)


def request_from_job_body(services: Services, body: bytes, principal: Principal | None) -> RunRequest:
    """The request of ``POST /v1/jobs``: ``{"kind", "name", "params"}``, where ``params`` is the estimator's params
    object or the scorer's score request. The body is split into its members without parsing
    (``json_bounds.members``), so ``params`` is pre-checked and validated once, against the model of the named
    estimator or scorer, with errors located under ``("body", "params")``."""
    require_for_runs(services, principal)
    parts = json_bounds.members(body)
    if parts is None:
        if len(body) >= json_bounds.MIN_CHECKED_BYTES:
            if not json_bounds.balanced(body):
                error = {"loc": ["body"], "msg": "unbalanced brackets", "type": "json_invalid"}
                raise InvalidFields("The body is not valid JSON.", [error], malformed=True)
            raise invalid("a job is an object {kind, name, params}", ("body",), "model_type")
        whole = parse(JobBody, body)
        parts = {k: json.dumps(v).encode() for k, v in whole.model_dump().items()}
    envelope = b",".join(json.dumps(k).encode() + b":" + v for k, v in parts.items() if k != "params")
    target = parse(JobTarget, b"{" + envelope + b"}")
    assert isinstance(target, JobTarget)
    spec = find_spec(target.kind, target.name)
    params = parse(body_model(spec), parts.get("params", b"{}"), ("body", "params"))
    return make_request(spec, params, principal.key_id if principal else None)


@dataclass(frozen=True)
class Answered:
    """The request's run and whether it was already stored."""

    run: RunRow
    cached: bool


@dataclass(frozen=True)
class Queued:
    """The request costs more than the synchronous budget: this job computes it."""

    job: JobRow


def _cost(spec: Spec, params: Any) -> float:
    """The cost of ``params`` (array references resolved, or standing in by their shape) in ``spec.cost_unit``."""
    if isinstance(spec, EstimatorSpec):
        return float(spec.cost(params))
    check_unique(params.answer_key.items, ("answer_key", "items"))
    return float(spec.cost(params.answer_key.items, params.predictions.items, params.params))


def _resolved(services: Services, spec: Spec, params: Any, api_key_id: str | None, *, shapes_only: bool) -> Any:
    """``params`` with uploaded-array references resolved (``shapes_only``: zero-cost stand-ins of the stored
    shape and dtype, from the arrays' metadata, for the cost check before anything is loaded)."""
    engines = services.engines
    if isinstance(spec, EstimatorSpec):
        return arrays.resolve(engines, params, api_key_id, shapes_only=shapes_only)
    updates = {
        part: getattr(params, part).model_copy(
            update={
                "items": arrays.resolve_items(
                    engines, getattr(params, part).items, api_key_id, (part, "items"), shapes_only=shapes_only
                )
            }
        )
        for part in ("answer_key", "predictions")
    }
    return params.model_copy(update=updates)


def checked_cost(services: Services, request: RunRequest, *, queue_available: bool) -> float:
    """The request's cost from its params and its arrays' stored shapes (nothing loaded), checked against the
    caps: above ``hard_cap`` (and above ``sync_budget`` where no queue can take it) an ``InvalidFields``."""
    shaped = _resolved(services, request.spec, request.params, request.api_key_id, shapes_only=True)
    cost = _cost(request.spec, shaped)
    return budgets.check_caps(request.spec, cost, queue_available=queue_available, loc=("body",))


def _produce(spec: Spec, params: Any, progress: Progress) -> Any:
    if isinstance(spec, EstimatorSpec):
        return spec.fn(params, progress)
    progress(0.1, "scoring")
    return ScoreOutcome.model_validate(
        score_all(spec, params.answer_key.items, params.predictions.items, params.params)
    )


def run(
    services: Services,
    request: RunRequest,
    *,
    client: str | None,
    progress: Progress = no_progress,
    in_job: bool = False,
) -> Answered | Queued:
    """Answer ``request``: the stored run (looked up once), else the cost decision, then a job (over the
    synchronous budget, unless already ``in_job``: work inside a job runs there, never as a nested job) or a new
    run computed under one of this process's concurrency slots and stored. The arrays are loaded once the caps
    passed, and the cost is checked again on the loaded values."""
    engines = services.engines
    stored = (
        request.remembered
        or runs.stored_run(engines, request.key, request.api_key_id)
        or runs.reused_run(engines, request.key, request.api_key_id)
    )
    if stored is not None:
        return Answered(stored, True)
    spec = request.spec
    cost = checked_cost(services, request, queue_available=in_job or services.jobs.available)
    if cost > spec.sync_budget and not in_job:
        return Queued(_submit(services, request, client, existing_run_id=None))
    with budgets.sync_slot(services, large=cost >= 0.1 * spec.sync_budget, wait=in_job):
        resolved = _resolved(services, spec, request.params, request.api_key_id, shapes_only=False)
        cost = budgets.check_caps(spec, _cost(spec, resolved), queue_available=True, loc=("body",))
        if cost > spec.sync_budget and not in_job:
            return Queued(_submit(services, request, client, existing_run_id=None))
        row, cached = runs.compute_and_store(
            engines, request.key, request.params_json, lambda: _produce(spec, resolved, progress), request.api_key_id
        )
    return Answered(row, cached)


def queue(services: Services, request: RunRequest, client: str | None) -> JobRow:
    """``POST /v1/jobs``: queue ``request`` whatever its cost (below the hard cap); a job for a stored identical
    run succeeds at once."""
    checked_cost(services, request, queue_available=True)
    engines = services.engines
    stored = runs.stored_run(engines, request.key, request.api_key_id) or runs.reused_run(
        engines, request.key, request.api_key_id
    )
    return _submit(services, request, client, existing_run_id=stored.id if stored is not None else None)


def _submit(services: Services, request: RunRequest, client: str | None, existing_run_id: str | None) -> JobRow:
    return services.jobs.submit(
        kind=request.spec.kind,
        name=request.spec.name,
        version=request.spec.version,
        params_json=request.params_json,
        api_key_id=request.api_key_id,
        client=client,
        existing_run_id=existing_run_id,
    )


def run_job(services: Services, job: JobRow, progress: Progress) -> str:
    """The ``estimator`` and ``scorer`` job kinds: compute and store the run inside this job (or find the
    identical one stored meanwhile)."""
    spec = find_spec(job.kind, job.name)
    params = body_model(spec).model_validate_json(job.params)
    request = RunRequest(spec, params, job.params, cache_key(spec, job.params), job.api_key_id)
    outcome = run(services, request, client=job.client, progress=progress, in_job=True)
    assert isinstance(outcome, Answered)
    return outcome.run.id
