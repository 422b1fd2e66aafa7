"""Estimator catalog and one typed ``POST /v1/estimators/{name}`` route per registered estimator."""

from typing import Any

import anyio
from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from api import arrays
from api.auth import Principal, RunPrincipal
from api.deps import EnginesDep
from api.envelope import canonical_params, envelope_json, sha256_hex, typed_envelope
from api.execution import cached_run, check_cost, memory_cached, run_estimator
from api.jobs import JobOut
from api.problems import COMMON, ApiError, responses
from api.routers.jobs import submit_estimator_job
from db.engine import Engines
from service.registry import ESTIMATORS, EstimatorSpec
from service.types import StrictModel


class EstimatorSummary(BaseModel):
    name: str
    version: str
    family: str
    summary: str
    paper: str
    citation: str


class EstimatorList(BaseModel):
    items: list[EstimatorSummary]


class EstimatorDetail(EstimatorSummary):
    params_schema: dict[str, Any]
    result_schema: dict[str, Any]
    cost_unit: str
    sync_budget: float
    hard_cap: float = Field(description="Requests whose cost exceeds this are refused (422).")


ABOVE_BUDGET: dict[int | str, dict[str, Any]] = {
    202: {
        "model": JobOut,
        "description": "The cost exceeds the synchronous budget: the run was queued as a job; poll `Location`.",
    }
}


def _summary(spec: EstimatorSpec) -> dict[str, Any]:
    return {k: getattr(spec, k) for k in EstimatorSummary.model_fields}


def _route_name(spec: EstimatorSpec) -> str:
    return "run_" + spec.name.replace(".", "_")


def _make_endpoint(spec: EstimatorSpec) -> Any:
    params_model = spec.params_model

    def blocking(params: StrictModel, request: Request, principal: Principal | None, engines: Engines) -> Response:
        resolved = arrays.resolve(engines, params)
        cost = check_cost(spec, resolved, queue_available=request.app.state.jobs.available)
        if cost > spec.sync_budget:
            stored = cached_run(engines, "estimator", spec.name, spec.version, canonical_params(params))
            if stored is not None:
                return Response(envelope_json(stored, cached=True), media_type="application/json")
            return submit_estimator_job(request, spec, params, principal)
        api_key_id = principal.key_id if principal else None
        row, cached = run_estimator(engines, spec, params, api_key_id=api_key_id, resolved=resolved)
        return Response(envelope_json(row, cached=cached), media_type="application/json")

    async def endpoint(
        params: params_model, request: Request, principal: RunPrincipal, engines: EnginesDep
    ) -> Response:  # type: ignore[valid-type]
        hit = memory_cached(engines, "estimator", spec.name, spec.version, sha256_hex(canonical_params(params)))
        if hit is not None:
            return Response(envelope_json(hit, cached=True), media_type="application/json")
        return await anyio.to_thread.run_sync(blocking, params, request, principal, engines)

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
        router.add_api_route(
            f"/{spec.name}",
            _make_endpoint(spec),
            methods=["POST"],
            response_model=envelope,
            summary=spec.summary,
            name=_route_name(spec),
            operation_id=_route_name(spec),
            responses=responses(*COMMON, 401, 403, 503) | ABOVE_BUDGET,
        )

    @router.get("", response_model=EstimatorList, responses=responses(500))
    def list_estimators() -> dict[str, Any]:
        """Every registered estimator with its version, family, paper and citation."""
        return {"items": [_summary(s) for s in sorted(ESTIMATORS.values(), key=lambda s: s.name)]}

    @router.get("/{name}", response_model=EstimatorDetail, responses=responses(404, 500))
    def get_estimator(name: str) -> dict[str, Any]:
        """One estimator with the JSON Schemas of its params and result."""
        spec = ESTIMATORS.get(name)
        if spec is None:
            raise ApiError(404, f"no estimator named {name!r}")
        return {
            **_summary(spec),
            "params_schema": spec.params_model.model_json_schema(),
            "result_schema": spec.result_model.model_json_schema(mode="serialization"),
            "cost_unit": spec.cost_unit,
            "sync_budget": spec.sync_budget,
            "hard_cap": spec.hard_cap,
        }

    @router.post("/{name}", responses=responses(404, 500), include_in_schema=False)
    def unknown_estimator(name: str) -> None:
        raise ApiError(404, f"no estimator named {name!r}")

    return router
