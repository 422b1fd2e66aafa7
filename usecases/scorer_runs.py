"""Stateless scoring (``POST /v1/scorers/{name}/score``): every item scored together and stored as a run, or as a
``scorer`` job when the call costs more than the scorer's synchronous budget."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from db.repositories.jobs import JobRow
from service.registry import SCORERS, Progress, ScorerSpec
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases import arrays, runs
from usecases.api_keys import Principal, require_for_runs
from usecases.errors import NotFound
from usecases.estimator_runs import Answered, Queued, check_caps, parse_params
from usecases.runs import CacheKey
from usecases.scoring import ScoreOutcome, check_unique, score_all

if TYPE_CHECKING:
    from usecases.services import Services

_REQUEST_MODELS: dict[str, type[StrictModel]] = {}


def scorer(name: str) -> ScorerSpec:
    spec = SCORERS.get(name)
    if spec is None:
        raise NotFound(f"no scorer named {name!r}")
    return spec


def request_model(spec: ScorerSpec) -> type[StrictModel]:
    """``{"answer_key":{"items":[...]},"predictions":{"items":[...]},"params":{...}}`` typed for ``spec`` (built
    once per scorer)."""
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


def _resolved_items(services: Services, body: Any) -> tuple[list[Any], list[Any]]:
    """The answer-key and prediction items with uploaded-array references resolved and checked."""
    engines = services.engines
    return (
        arrays.resolve_items(engines, body.answer_key.items, ("answer_key", "items")),
        arrays.resolve_items(engines, body.predictions.items, ("predictions", "items")),
    )


def _checked_cost(services: Services, spec: ScorerSpec, body: Any, *, queue_available: bool) -> tuple[float, Any]:
    """(cost, resolved items) of a score request, refused above the hard cap (and above the synchronous budget
    when no queue can take it)."""
    check_unique(body.answer_key.items, ("answer_key", "items"))
    key, preds = _resolved_items(services, body)
    cost = check_caps(spec, float(spec.cost(key, preds, body.params)), queue_available=queue_available, loc=("body",))
    return cost, (key, preds)


def _cache_key(spec: ScorerSpec, params_json: str) -> CacheKey:
    return ("scorer", spec.name, spec.version, runs.sha256_hex(params_json))


def _produce(spec: ScorerSpec, items: tuple[list[Any], list[Any]], params: Any) -> ScoreOutcome:
    return ScoreOutcome.model_validate(score_all(spec, items[0], items[1], params))


def _submit(services: Services, spec: ScorerSpec, params_json: str, principal: Principal | None, **kw: Any) -> JobRow:
    return services.jobs.submit(
        kind="scorer",
        name=spec.name,
        version=spec.version,
        params_json=params_json,
        api_key_id=principal.key_id if principal else None,
        **kw,
    )


def score(
    services: Services, spec: ScorerSpec, body: Any, principal: Principal | None, client: str | None
) -> Answered | Queued:
    """Score ``body.predictions`` against ``body.answer_key`` with ``body.params`` (``body`` is
    ``request_model(spec)``): the stored run, a new run, or a job when the cost exceeds the synchronous budget."""
    require_for_runs(services, principal)
    params_json = runs.canonical_params(body)
    key = _cache_key(spec, params_json)
    stored = runs.stored_run(services.engines, key)
    if stored is not None:
        return Answered(stored, True)
    cost, items = _checked_cost(services, spec, body, queue_available=services.jobs.available)
    if cost > spec.sync_budget:
        return Queued(_submit(services, spec, params_json, principal, client=client))
    api_key_id = principal.key_id if principal else None
    row, cached = runs.compute_and_store(
        services.engines, key, params_json, lambda: _produce(spec, items, body.params), api_key_id
    )
    return Answered(row, cached)


def queue_score(
    services: Services, name: str, raw_body: dict[str, Any], principal: Principal | None, client: str | None
) -> JobRow:
    """``POST /v1/jobs`` with ``kind: scorer``: queue scorer ``name`` on the score request ``raw_body`` whatever
    its cost (below the hard cap); a job for a stored identical run succeeds at once."""
    require_for_runs(services, principal)
    spec = scorer(name)
    body = parse_params(request_model(spec), json.dumps(raw_body).encode(), ("body", "params"))
    _checked_cost(services, spec, body, queue_available=True)
    params_json = runs.canonical_params(body)
    stored = runs.stored_run(services.engines, _cache_key(spec, params_json))
    return _submit(services, spec, params_json, principal, client=client, existing_run_id=stored.id if stored else None)


def run_job(services: Services, job: JobRow, progress: Progress) -> str:
    """The ``scorer`` job kind: score and store the run (or find the identical one stored meanwhile)."""
    spec = scorer(job.name)
    body = request_model(spec).model_validate_json(job.params)
    progress(0.0, "resolving items")
    items = _resolved_items(services, body)
    progress(0.1, "scoring")
    key: CacheKey = ("scorer", spec.name, spec.version, job.params_sha256)
    row, _ = runs.stored_or_computed(
        services.engines, key, job.params, lambda: _produce(spec, items, body.params), job.api_key_id
    )
    return row.id
