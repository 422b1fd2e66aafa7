"""The application factory ``create_app(settings=None)``; uvicorn starts it with ``--factory``
(``uvicorn api.app:create_app --factory``). Importing this module builds nothing."""

import gc
import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache

import anyio
from fastapi import FastAPI
from pydantic.json_schema import models_json_schema
from sqlalchemy.exc import SQLAlchemyError
from starlette.middleware.body_limit import RequestBodyLimitMiddleware

from api import problems
from api.fastpath import RunCallMiddleware
from api.metrics import Metrics, MetricsMiddleware
from api.metrics import router as metrics_router
from api.middleware import RequestContextMiddleware, ResponseHeadersMiddleware
from api.problems import Problem
from api.problems import responses as problem_responses
from api.ratelimit import RateLimitMiddleware
from api.routers import (
    api_keys,
    benchmarks,
    challenges,
    estimators,
    health,
    plots,
    reproductions,
    runs,
    scorers,
    submissions,
    web,
)
from api.routers import arrays as arrays_router
from api.routers import jobs as jobs_router
from api.schemas.jobs import JobRequest
from api.text_guard import TextGuardMiddleware
from service.registry import ESTIMATORS, SCORERS, load_all
from usecases import budgets, logs
from usecases.api_keys import ensure_bootstrap_admin
from usecases.run_requests import score_request_model
from usecases.services import Services
from usecases.settings import Settings
from usecases.submissions import SubmissionIn
from usecases.version import CODE_VERSION

log = logging.getLogger("estibench.api")

SUBMISSIONS_PATH = re.compile(r"/v1/benchmarks/[^/]+/submissions")
"""The route that takes a JSON Lines body (``application/x-ndjson``) as well as JSON."""
DESCRIPTION = """Estimators and benchmark scoring protocols of NeurIPS 2026 papers, with a result store.

Every error is an RFC 9457 `application/problem+json` body; 422 bodies list `errors: [{loc, msg, type}]`.
"""


@cache
def freeze_startup_heap() -> None:
    """Once per process, when the first app starts: collect, then move every object start-up made (modules,
    registries, the app) to the collector's permanent generation, so a full collection scans only what was made
    since. With the start-up heap in reach, the full collections that a 10,000-item submission's allocations
    trigger took 200-290 ms each (docs/performance.md)."""
    gc.collect()
    gc.freeze()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app for ``settings`` (default: from ``ESTIBENCH_*`` variables). Nothing touches the database or
    the filesystem before the app starts (its lifespan)."""
    settings = settings or Settings()
    logs.configure(settings.log_level, settings.log_json)
    load_all()
    services = Services(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        budgets.map_large_allocations()
        try:
            await anyio.to_thread.run_sync(ensure_bootstrap_admin, services)
        except SQLAlchemyError:
            log.warning("could not store the bootstrap admin key (database unreachable or not migrated)")
        freeze_startup_heap()
        run_reaper = settings.queue == "auto" and settings.job_reaper_interval_s > 0
        stop_reaper = services.jobs.start_reaper() if run_reaper else None
        yield
        if stop_reaper is not None:
            stop_reaper()
        services.dispose()

    app = FastAPI(
        title="estibench",
        version=CODE_VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.services = services
    app.state.metrics = Metrics(services.jobs)
    problems.install(app)
    app.add_middleware(RunCallMiddleware)
    app.add_middleware(TextGuardMiddleware)
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=settings.max_body_bytes)
    app.add_middleware(
        RateLimitMiddleware,
        per_minute=settings.rate_limit_per_minute,
        burst=settings.rate_limit_burst,
        redis_url=settings.redis_url,
    )
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(RequestContextMiddleware, raw_body_paths=("/v1/arrays",), ndjson_paths=SUBMISSIONS_PATH)
    app.add_middleware(ResponseHeadersMiddleware)
    app.include_router(health.router)
    app.include_router(estimators.build_router())
    app.include_router(runs.router)
    app.include_router(api_keys.router)
    app.include_router(scorers.build_router())
    app.include_router(benchmarks.router)
    app.include_router(submissions.router)
    app.include_router(challenges.router)
    app.include_router(jobs_router.router)
    app.include_router(arrays_router.build_router(settings.max_array_bytes))
    app.include_router(metrics_router)
    app.include_router(plots.router)
    app.include_router(reproductions.router)
    app.include_router(web.build_router())
    web.mount_static(app)
    _complete_openapi(app)
    return app


def _add_params_schema(components: dict, name: str, model: type) -> None:
    """Add ``model``'s JSON Schema as component ``name`` with its nested models; a nested model whose name is taken
    by a different schema is renamed ``<name>__<model>`` (and referenced so)."""
    text = json.dumps(model.model_json_schema(ref_template="#/components/schemas/{model}"))
    defs = json.loads(text).get("$defs", {})
    clashing = {sub for sub, nested in defs.items() if components.get(sub, nested) != nested}
    for sub in clashing:
        text = text.replace(f'"#/components/schemas/{sub}"', f'"#/components/schemas/{name}__{sub}"')
    schema = json.loads(text)
    for sub, nested in schema.pop("$defs", {}).items():
        components[f"{name}__{sub}" if sub in clashing else sub] = nested
    components[name] = schema


def _add_score_request_schemas(components: dict) -> None:
    """Add every scorer's score request body (``{slug}_score_request``) with its nested models, generated together
    as FastAPI generates route models, so same-named item models get module-qualified keys (renamed later by
    ``_unique_schema_names``, e.g. ``film_mcq_answer_key_item``); a key taken by a different schema is an error."""
    pairs = [(score_request_model(spec), "validation") for spec in SCORERS.values()]
    _, top = models_json_schema(pairs, ref_template="#/components/schemas/{model}")  # type: ignore[arg-type]
    for name, schema in top.get("$defs", {}).items():
        if components.setdefault(name, schema) != schema:
            raise RuntimeError(f"OpenAPI component {name!r} is defined twice")


SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "An API key: `Authorization: Bearer ek_...`."},
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "An API key in `X-API-Key`."},
}
"""Either header carries a key; with neither a call is anonymous (allowed unless ``ESTIBENCH_REQUIRE_KEYS``)."""


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _unique_schema_names(schema: dict) -> dict:
    """Give every component schema a unique title (generators name classes by title): FastAPI's module-qualified
    keys of same-named models (``service__scoring__raven__AnswerKeyItem``) become ``raven_answer_key_item``, and any
    other component sharing its title is titled by its key."""
    components = schema["components"]["schemas"]
    renames = {}
    for key in components:
        parts = key.split("__")
        if len(parts) > 2 and parts[0] == "service":
            new = f"{parts[-2]}_{_snake(parts[-1])}"
            if new not in components and new not in renames.values():
                renames[key] = new
    text = json.dumps(schema)
    for old, new in renames.items():
        text = text.replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    schema = json.loads(text)
    components = schema["components"]["schemas"]
    schema["components"]["schemas"] = {renames.get(k, k): v for k, v in components.items()}
    titles: dict[str, int] = {}
    for value in components.values():
        titles[value.get("title", "")] = titles.get(value.get("title", ""), 0) + 1
    for key, value in schema["components"]["schemas"].items():
        if key in renames.values() or titles.get(value.get("title", ""), 0) > 1:
            value["title"] = key
    return schema


def _float_enums_as_consts(node: object) -> object:
    """Number enums with fractional members (``Literal[0.25, 0.5]``) as ``anyOf`` consts: the same values, in a
    form client generators accept."""
    if isinstance(node, list):
        return [_float_enums_as_consts(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _float_enums_as_consts(v) for k, v in node.items()}
    members = node.get("enum")
    if node.get("type") == "number" and isinstance(members, list) and any(isinstance(m, float) for m in members):
        node["anyOf"] = [{"const": m} for m in node.pop("enum")]
    return node


def _complete_openapi(app: FastAPI) -> None:
    """Complete the OpenAPI document: the estimator and scorer request bodies (the routes read the raw body, see
    api/fastpath.py), the shared ``Problem`` component, every 422 as a problem body (FastAPI's default
    ``HTTPValidationError`` is not what we send), 500 on every operation, 400/413/415/422 on every operation
    that takes a body, a unique title for every schema, fractional enums as consts, and the two ways of sending a
    key (``securitySchemes``, optional on every operation)."""
    original = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = original()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for spec in ESTIMATORS.values():
                _add_params_schema(components, estimators.params_component(spec), spec.params_model)
            _add_score_request_schemas(components)
            _add_params_schema(components, "JobRequest", JobRequest)
            _add_params_schema(components, "SubmissionIn", SubmissionIn)
            components["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(components["Problem"].pop("$defs", {}))
            for ops in schema["paths"].values():
                for op in ops.values():
                    needed = {"429", "500"} | ({"400", "413", "415", "422"} if "requestBody" in op else set())
                    if "422" in op["responses"]:
                        needed.add("422")
                    for code in needed:
                        op["responses"][code] = problem_responses(int(code))[int(code)]
            for unused in ("HTTPValidationError", "ValidationError"):
                components.pop(unused, None)
            schema = _float_enums_as_consts(_unique_schema_names(schema))
            schema["components"]["securitySchemes"] = SECURITY_SCHEMES
            schema["security"] = [{"bearer": []}, {"apiKey": []}, {}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
