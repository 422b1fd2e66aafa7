"""Application factory: ``create_app(settings=None)`` and the module-level ``app`` (ARCHITECTURE §2)."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy.exc import SQLAlchemyError
from starlette.middleware.body_limit import RequestBodyLimitMiddleware

from api import logs, problems
from api.auth import ensure_bootstrap_admin
from api.execution import CODE_VERSION
from api.fastpath import CachedRunMiddleware
from api.jobs import JobContext
from api.metrics import Metrics, MetricsMiddleware
from api.metrics import router as metrics_router
from api.middleware import RequestContextMiddleware
from api.problems import Problem
from api.problems import responses as problem_responses
from api.ratelimit import RateLimitMiddleware
from api.routers import api_keys, benchmarks, estimators, health, runs, scorers, submissions
from api.routers import arrays as arrays_router
from api.routers import jobs as jobs_router
from api.settings import Settings
from db.engine import make_engines
from service.registry import load_all

log = logging.getLogger("estibench.api")

DESCRIPTION = """Estimators and benchmark scoring protocols of NeurIPS 2026 papers, with a result store.

Every error is an RFC 9457 `application/problem+json` body; 422 bodies list `errors: [{loc, msg, type}]`.
"""


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app for ``settings`` (default: from ``ESTIBENCH_*`` variables)."""
    settings = settings or Settings()
    logs.configure(settings.log_level, settings.log_json)
    load_all()
    engines = make_engines(settings.database_url, synchronous=settings.sqlite_synchronous)

    secret_key = settings.resolved_secret_key()
    job_ctx = JobContext(settings, engines)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            ensure_bootstrap_admin(engines, secret_key, settings.admin_key)
        except SQLAlchemyError:
            log.warning("could not store the bootstrap admin key (database unreachable or not migrated)")
        reaper = job_ctx.start_reaper() if settings.queue == "auto" and settings.job_reaper_interval_s > 0 else None
        yield
        if reaper is not None:
            reaper()
        engines.dispose()

    app = FastAPI(
        title="estibench",
        version=CODE_VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engines = engines
    app.state.secret_key = secret_key
    app.state.jobs = job_ctx
    app.state.metrics = Metrics(lambda: job_ctx)
    problems.install(app)
    app.add_middleware(CachedRunMiddleware)
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=settings.max_body_bytes)
    app.add_middleware(
        RateLimitMiddleware,
        per_minute=settings.rate_limit_per_minute,
        burst=settings.rate_limit_burst,
        redis_url=settings.redis_url,
    )
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(RequestContextMiddleware, raw_body_paths=("/v1/arrays",))
    app.include_router(health.router)
    app.include_router(estimators.build_router())
    app.include_router(runs.router)
    app.include_router(api_keys.router)
    app.include_router(scorers.build_router())
    app.include_router(benchmarks.router)
    app.include_router(submissions.router)
    app.include_router(jobs_router.router)
    app.include_router(arrays_router.build_router(settings.max_array_bytes))
    app.include_router(metrics_router)
    _register_problem_schema(app)
    return app


def _register_problem_schema(app: FastAPI) -> None:
    """Complete the OpenAPI document: the shared ``Problem`` component, every 422 as a problem body (FastAPI's
    default ``HTTPValidationError`` is not what we send), 500 on every operation, and 400/413/415/422 on every
    operation that takes a body."""
    original = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = original()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
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
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


app = create_app()
