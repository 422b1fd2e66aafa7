"""Scorer catalog and one typed stateless ``POST /v1/scorers/{name}/score`` route per registered scorer."""

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, create_model

from api.auth import CHECK_CREDENTIALS, OptionalCaller
from api.deps import ServicesDep
from api.envelope import envelope_json, typed_envelope
from api.problems import COMMON, responses
from service.registry import SCORERS, ScorerSpec
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases.errors import Forbidden, NotFound, Unauthorized
from usecases.scorer_runs import score, scorer
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
    }


def _slug(spec: ScorerSpec) -> str:
    return spec.name.replace(".", "_")


def request_model(spec: ScorerSpec) -> type[StrictModel]:
    """``{"answer_key":{"items":[...]},"predictions":{"items":[...]},"params":{...}}`` typed for ``spec``."""
    key = create_model(
        f"{_slug(spec)}_answer_key",
        __base__=StrictModel,
        items=(list[spec.answer_key_item_model], Field(min_length=1, max_length=MAX_JSON_ARRAY)),
    )
    preds = create_model(
        f"{_slug(spec)}_predictions",
        __base__=StrictModel,
        items=(list[spec.prediction_item_model], Field(max_length=MAX_JSON_ARRAY)),
    )
    return create_model(
        f"{_slug(spec)}_score_request",
        __base__=StrictModel,
        answer_key=(key, ...),
        predictions=(preds, ...),
        params=(spec.params_model, Field(default_factory=spec.params_model)),
    )


def _make_endpoint(spec: ScorerSpec) -> Any:
    body_model = request_model(spec)

    def endpoint(body: body_model, principal: OptionalCaller, services: ServicesDep) -> Response:  # type: ignore[valid-type]
        row, cached = score(services, spec, body, principal)
        return Response(envelope_json(row, cached=cached), media_type="application/json")

    endpoint.__name__ = f"score_{_slug(spec)}"
    endpoint.__doc__ = f"{spec.summary}\n\nPrimary metric: {spec.primary_metric}. Paper: {spec.paper}"
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
            responses=responses(*COMMON, Unauthorized, Forbidden),
        )

    @router.post("/{name}/score", responses=responses(NotFound, 500), include_in_schema=False)
    def unknown_scorer(name: str) -> None:
        raise NotFound(f"no scorer named {name!r}")

    return router
