"""Scorer catalog and one typed stateless ``POST /v1/scorers/{name}/score`` route per registered scorer."""

from dataclasses import asdict
from functools import partial
from typing import Any

import anyio
from fastapi import APIRouter, Request, Response

from api.auth import CHECK_CREDENTIALS
from api.deps import ClientAddress, ServicesDep
from api.envelope import envelope_json, typed_envelope
from api.fastpath import opened_request
from api.problems import COMMON, responses
from api.schemas.jobs import ABOVE_BUDGET, job_response
from api.schemas.scorers import ScorerDetail, ScorerList, ScorerSummary
from service.registry import SCORERS, ScorerSpec
from usecases.errors import Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.run_requests import Answered, find_spec, run
from usecases.scoring import ScoreOutcome


def summary(spec: ScorerSpec) -> dict[str, Any]:
    return {k: getattr(spec, k) for k in ScorerSummary.model_fields}


def detail(spec: ScorerSpec) -> dict[str, Any]:
    return {
        **summary(spec),
        "answer_key_item_schema": spec.answer_key_item_model.model_json_schema(),
        "prediction_item_schema": spec.prediction_item_model.model_json_schema(),
        "params_schema": spec.params_model.model_json_schema(),
        "metrics": {
            m: {"higher_is_better": i.higher_is_better, "range": list(i.range), "description": i.description}
            for m, i in spec.metrics.items()
        },
        "paired_tests": spec.paired_tests,
        "cost_unit": spec.cost_unit,
        "sync_budget": spec.sync_budget,
        "hard_cap": spec.hard_cap,
        "conventions": [asdict(conv) for conv in spec.conventions],
    }


def _slug(spec: ScorerSpec) -> str:
    return spec.name.replace(".", "_")


def request_component(spec: ScorerSpec) -> str:
    """The OpenAPI component naming the request body of ``spec``'s route (added by ``api.app``)."""
    return f"{_slug(spec)}_score_request"


def _make_endpoint(spec: ScorerSpec) -> Any:
    async def endpoint(request: Request, services: ServicesDep, client: ClientAddress) -> Response:
        outcome = await anyio.to_thread.run_sync(partial(run, services, opened_request(request), client=client))
        if isinstance(outcome, Answered):
            return Response(envelope_json(outcome.run, cached=outcome.cached), media_type="application/json")
        return job_response(outcome.job, 202)

    endpoint.__name__ = f"score_{_slug(spec)}"
    endpoint.__doc__ = (
        f"{spec.summary}\n\nPrimary metric: {spec.primary_metric}. Cost unit: {spec.cost_unit}; synchronous "
        f"budget {spec.sync_budget:g} (above it: 202 and a job), hard cap {spec.hard_cap:g}. Paper: {spec.paper}"
    )
    return endpoint


def build_router() -> APIRouter:
    router = APIRouter(
        prefix="/v1/scorers", tags=["scorers"], dependencies=[CHECK_CREDENTIALS], responses=responses(Unauthorized)
    )

    @router.get("", response_model=ScorerList, responses=responses(500))
    def list_scorers() -> dict[str, Any]:
        """Every registered scorer with its primary metric."""
        return {"items": [summary(s) for s in sorted(SCORERS.values(), key=lambda s: s.name)]}

    @router.get("/{name}", response_model=ScorerDetail, responses=responses(NotFound, 500))
    def get_scorer(name: str) -> dict[str, Any]:
        """One scorer with its item schemas, params schema, metrics and primary metric."""
        return detail(find_spec("scorer", name))

    for spec in sorted(SCORERS.values(), key=lambda s: s.name):
        body = {"$ref": f"#/components/schemas/{request_component(spec)}"}
        router.add_api_route(
            f"/{spec.name}/score",
            _make_endpoint(spec),
            methods=["POST"],
            response_model=typed_envelope(f"{_slug(spec)}_score_run", ScoreOutcome),
            summary=spec.summary,
            operation_id=f"score_{_slug(spec)}",
            responses=responses(*COMMON, Unauthorized, Forbidden, QuotaExceeded, Unavailable) | ABOVE_BUDGET,
            openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": body}}}},
        )

    @router.post("/{name}/score", responses=responses(NotFound, 500), include_in_schema=False)
    def unknown_scorer(name: str) -> None:
        raise NotFound(f"no scorer named {name!r}")

    return router
