"""Estimator catalog and one typed ``POST /v1/estimators/{name}`` route per registered estimator."""

from functools import partial
from typing import Any

import anyio
from fastapi import APIRouter, Request, Response

from api.auth import CHECK_CREDENTIALS
from api.deps import ClientAddress, ServicesDep
from api.envelope import envelope_json, typed_envelope
from api.fastpath import opened_request
from api.problems import COMMON, responses
from api.schemas.estimators import EstimatorDetail, EstimatorList, EstimatorSummary
from api.schemas.jobs import ABOVE_BUDGET, job_response
from service.registry import ESTIMATORS, EstimatorSpec
from usecases.errors import Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.run_requests import Answered, find_spec, run


def _summary(spec: EstimatorSpec) -> dict[str, Any]:
    return {k: getattr(spec, k) for k in EstimatorSummary.model_fields}


def _route_name(spec: EstimatorSpec) -> str:
    return "run_" + spec.name.replace(".", "_")


def params_component(spec: EstimatorSpec) -> str:
    """The OpenAPI component naming the request body of ``spec``'s route (added by ``api.app``)."""
    return spec.name.replace(".", "_") + "_params"


def _make_endpoint(spec: EstimatorSpec) -> Any:
    async def endpoint(request: Request, services: ServicesDep, client: ClientAddress) -> Response:
        outcome = await anyio.to_thread.run_sync(partial(run, services, opened_request(request), client=client))
        if isinstance(outcome, Answered):
            return Response(envelope_json(outcome.run, cached=outcome.cached), media_type="application/json")
        return job_response(outcome.job, 202)

    endpoint.__name__ = _route_name(spec)
    endpoint.__doc__ = (
        f"{spec.summary}\n\nCost unit: {spec.cost_unit}; synchronous budget {spec.sync_budget:g}, "
        f"hard cap {spec.hard_cap:g}. Paper: {spec.paper}"
    )
    return endpoint


def build_router() -> APIRouter:
    router = APIRouter(prefix="/v1/estimators", tags=["estimators"])
    # The generated POST routes come first, so OPTIONS on them advertises POST (not the catalog GET).

    for spec in sorted(ESTIMATORS.values(), key=lambda s: s.name):
        envelope = typed_envelope(spec.name.replace(".", "_") + "_run", spec.result_model)
        body = {"$ref": f"#/components/schemas/{params_component(spec)}"}
        router.add_api_route(
            f"/{spec.name}",
            _make_endpoint(spec),
            methods=["POST"],
            response_model=envelope,
            summary=spec.summary,
            name=_route_name(spec),
            operation_id=_route_name(spec),
            responses=responses(*COMMON, Unauthorized, Forbidden, QuotaExceeded, Unavailable) | ABOVE_BUDGET,
            openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": body}}}},
        )

    @router.get(
        "", response_model=EstimatorList, responses=responses(Unauthorized, 500), dependencies=[CHECK_CREDENTIALS]
    )
    def list_estimators() -> dict[str, Any]:
        """Every registered estimator with its version, family, paper and citation."""
        return {"items": [_summary(s) for s in sorted(ESTIMATORS.values(), key=lambda s: s.name)]}

    @router.get(
        "/{name}",
        response_model=EstimatorDetail,
        responses=responses(Unauthorized, NotFound, 500),
        dependencies=[CHECK_CREDENTIALS],
    )
    def get_estimator(name: str) -> dict[str, Any]:
        """One estimator with the JSON Schemas of its params and result."""
        spec = find_spec("estimator", name)
        return {
            **_summary(spec),
            "params_schema": spec.params_model.model_json_schema(),
            "result_schema": spec.result_model.model_json_schema(mode="serialization"),
            "cost_unit": spec.cost_unit,
            "sync_budget": spec.sync_budget,
            "hard_cap": spec.hard_cap,
        }

    @router.post(
        "/{name}", responses=responses(NotFound, 500), include_in_schema=False, dependencies=[CHECK_CREDENTIALS]
    )
    def unknown_estimator(name: str) -> None:
        raise NotFound(f"no estimator named {name!r}")

    return router
