"""Application factory: ``create_app(settings=None)`` and the module-level ``app`` (ARCHITECTURE §2)."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy.exc import SQLAlchemyError

from api import logs, problems
from api.auth import ensure_bootstrap_admin
from api.execution import CODE_VERSION
from api.middleware import RequestContextMiddleware
from api.problems import Problem
from api.routers import api_keys, benchmarks, estimators, health, runs, scorers, submissions
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

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            ensure_bootstrap_admin(engines, secret_key, settings.admin_key)
        except SQLAlchemyError:
            log.warning("could not store the bootstrap admin key (database unreachable or not migrated)")
        yield
        engines.dispose()

    app = FastAPI(
        title="estibench",
        version=CODE_VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        max_body_size=settings.max_body_bytes,
    )
    app.state.settings = settings
    app.state.engines = engines
    app.state.secret_key = secret_key
    problems.install(app)
    app.add_middleware(RequestContextMiddleware, raw_body_paths=("/v1/arrays",))
    app.include_router(health.router)
    app.include_router(estimators.build_router())
    app.include_router(runs.router)
    app.include_router(api_keys.router)
    app.include_router(scorers.build_router())
    app.include_router(benchmarks.router)
    app.include_router(submissions.router)
    _register_problem_schema(app)
    return app


def _register_problem_schema(app: FastAPI) -> None:
    """Add the shared ``Problem`` component to the OpenAPI document the routes' ``responses`` refer to."""
    original = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = original()
            schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = Problem.model_json_schema(
                ref_template="#/components/schemas/{model}"
            )
            defs = schema["components"]["schemas"]["Problem"].pop("$defs", {})
            schema["components"]["schemas"].update(defs)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


app = create_app()
