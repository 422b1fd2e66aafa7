"""``POST/GET/DELETE /v1/jobs[/{id}]`` (ARCHITECTURE §3): long-running work on the job queue."""

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api import arrays, cursors
from api.auth import OptionalPrincipal, Principal, RunPrincipal
from api.envelope import canonical_params
from api.execution import check_cost
from api.jobs import JobContext, JobOut, JobStatus, job_json
from api.problems import COMMON, ApiError, responses
from db.repositories import jobs as repo
from db.repositories.jobs import JobRow
from service.registry import ESTIMATORS, EstimatorSpec
from service.types import StrictModel

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
JobId = Annotated[str, Path(max_length=64, description="The job id (a UUID).")]


class JobRequest(BaseModel):
    """A job: the estimator ``name`` and its ``params`` (the same object ``POST /v1/estimators/{name}`` takes)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: Literal["estimator"] = Field(description="What to run; estimator runs for now.")
    name: str = Field(min_length=1, max_length=128, description="Registered name, e.g. compression.nml_regret.")
    params: dict[str, Any] = Field(default_factory=dict, description="The estimator's params object.")


class JobPage(BaseModel):
    items: list[JobOut]
    next_cursor: str | None


def job_response(row: JobRow, status_code: int) -> JSONResponse:
    return JSONResponse(job_json(row), status_code=status_code, headers={"Location": f"/v1/jobs/{row.id}"})


def submit_estimator_job(
    request: Request, spec: EstimatorSpec, params: StrictModel, principal: Principal | None
) -> JSONResponse:
    """Queue ``spec`` on ``params`` (already cost-checked) and answer 202 + Location."""
    ctx: JobContext = request.app.state.jobs
    row = ctx.submit(
        kind="estimator",
        name=spec.name,
        version=spec.version,
        params_json=canonical_params(params),
        api_key_id=principal.key_id if principal else None,
        client=request.client.host if request.client else None,
    )
    return job_response(row, 202)


def validate_params(spec: EstimatorSpec, raw: dict[str, Any]) -> StrictModel:
    """JSON-mode validation (as the estimator route does); errors are located under ``body.params``."""
    try:
        return spec.params_model.model_validate_json(json.dumps(raw))
    except ValueError as exc:
        if not isinstance(exc, ValidationError):
            raise ApiError(
                422, "params must be finite JSON", errors=[{"loc": ["body", "params"], "msg": str(exc), "type": "json"}]
            ) from exc
        errors = [{"loc": ["body", "params", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise ApiError(422, "The params failed validation.", errors=errors) from exc


def _owner(request: Request, principal: Principal | None) -> tuple[str | None, str | None] | None:
    """With ``REQUIRE_KEYS`` a key sees its own jobs (an admin all); otherwise jobs are open to read."""
    if not request.app.state.settings.require_keys:
        return None
    if principal is None:
        raise ApiError(401, "an API key is required", headers={"WWW-Authenticate": "Bearer"})
    return None if principal.is_admin else (principal.key_id, None)


def _get_visible(request: Request, principal: Principal | None, job_id: str) -> JobRow:
    row = request.app.state.jobs.get(job_id)
    owner = _owner(request, principal)
    if row is None or (owner is not None and row.api_key_id != owner[0]):
        raise ApiError(404, f"no job {job_id!r}")
    return row


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    responses=responses(*COMMON, 401, 403, 404, 503),
)
def create_job(body: JobRequest, request: Request, principal: RunPrincipal) -> JSONResponse:
    """Queue a computation; 202 + ``Location: /v1/jobs/{id}``. An identical stored run makes the job succeed at once."""
    spec = ESTIMATORS.get(body.name)
    if spec is None:
        raise ApiError(404, f"no estimator named {body.name!r}")
    params = validate_params(spec, body.params)
    check_cost(spec, arrays.resolve(request.app.state.engines, params, ("params",)), queue_available=True)
    return submit_estimator_job(request, spec, params, principal)


@router.get("", response_model=JobPage, responses=responses(401, 422, 500))
def list_jobs(
    request: Request,
    principal: OptionalPrincipal,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    """Jobs, newest first; pass ``next_cursor`` back as ``cursor``."""
    before = cursors.decode_seq(cursor) if cursor else None
    ctx: JobContext = request.app.state.jobs
    with ctx.engines.read.connect() as conn:
        rows = repo.list_page(conn, status=status, limit=limit + 1, before_seq=before, owner=_owner(request, principal))
    page, more = rows[:limit], len(rows) > limit
    return JSONResponse(
        {"items": [job_json(r) for r in page], "next_cursor": cursors.encode(page[-1].seq) if more else None}
    )


@router.get("/{job_id}", response_model=JobOut, responses=responses(401, 404, 422, 500))
def get_job(job_id: JobId, request: Request, principal: OptionalPrincipal) -> Response:
    """Status, progress, the run it produced (``run_id``) or the problem it failed with."""
    return JSONResponse(job_json(_get_visible(request, principal, job_id)))


@router.delete(
    "/{job_id}",
    response_model=JobOut,
    responses={202: {"model": JobOut, "description": "Cancellation requested; the job stops within seconds."}}
    | responses(401, 403, 404, 409, 422, 500),
)
def cancel_job(job_id: JobId, request: Request, principal: OptionalPrincipal) -> Response:
    """Cancel: a queued job at once (200); a running one at its next progress report (202). Owner or admin only."""
    row = _get_visible(request, principal, job_id)
    if row.api_key_id is not None:
        if principal is None:
            raise ApiError(401, "this job belongs to an API key; send it", headers={"WWW-Authenticate": "Bearer"})
        if principal.key_id != row.api_key_id and not principal.is_admin:
            raise ApiError(403, "only the key that made the job, or an admin, may cancel it")
    elif not (principal and principal.is_admin):
        client = request.client.host if request.client else None
        if principal is not None or row.client != client:
            raise ApiError(403, "an anonymous job may be cancelled from its own address, or by an admin")
    if row.status in ("succeeded", "failed"):
        raise ApiError(409, f"the job has already {row.status}")
    row = request.app.state.jobs.cancel(job_id)
    return JSONResponse(job_json(row), status_code=200 if row.status == "cancelled" else 202)
