"""Scorer catalog and one typed stateless ``POST /v1/scorers/{name}/score`` route per registered scorer."""

from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from api.auth import CHECK_CREDENTIALS, OptionalCaller
from api.deps import ClientAddress, ServicesDep
from api.envelope import envelope_json, typed_envelope
from api.problems import COMMON, responses
from api.routers.estimators import ABOVE_BUDGET
from api.routers.jobs import job_response
from service.registry import SCORERS, ScorerSpec
from usecases.errors import Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.estimator_runs import Answered
from usecases.scorer_runs import request_model, score, scorer
from usecases.scoring import ScoreOutcome


class MetricOut(BaseModel):
    higher_is_better: bool
    range: list[float]
    description: str


class ScorerSummary(BaseModel):
    name: str
    version: str
    summary: str
    paper: str = Field(description="The paper's short title.")
    citation: str
    primary_metric: str


class ScorerList(BaseModel):
    items: list[ScorerSummary]


class ScorerDetail(ScorerSummary):
    answer_key_item_schema: dict[str, Any]
    prediction_item_schema: dict[str, Any]
    params_schema: dict[str, Any]
    metrics: dict[str, MetricOut]
    paired_tests: dict[str, Literal["mcnemar", "wilcoxon", "bootstrap"]] = Field(
        description="Metrics with per-item values and the paired test comparing two submissions on graded values "
        "(0/1 values always get exact McNemar)."
    )
    cost_unit: str
    sync_budget: float = Field(description="Stateless calls costing more run as a job (202).")
    hard_cap: float = Field(description="Calls and submissions costing more are refused (422).")


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
    }


def _slug(spec: ScorerSpec) -> str:
    return spec.name.replace(".", "_")


def _make_endpoint(spec: ScorerSpec) -> Any:
    body_model = request_model(spec)

    def endpoint(body: body_model, principal: OptionalCaller, services: ServicesDep, client: ClientAddress) -> Response:  # type: ignore[valid-type]
        outcome = score(services, spec, body, principal, client)
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
        return detail(scorer(name))

    for spec in sorted(SCORERS.values(), key=lambda s: s.name):
        router.add_api_route(
            f"/{spec.name}/score",
            _make_endpoint(spec),
            methods=["POST"],
            response_model=typed_envelope(f"{_slug(spec)}_score_run", ScoreOutcome),
            summary=spec.summary,
            operation_id=f"score_{_slug(spec)}",
            responses=responses(*COMMON, Unauthorized, Forbidden, QuotaExceeded, Unavailable) | ABOVE_BUDGET,
        )

    @router.post("/{name}/score", responses=responses(NotFound, 500), include_in_schema=False)
    def unknown_scorer(name: str) -> None:
        raise NotFound(f"no scorer named {name!r}")

    return router
