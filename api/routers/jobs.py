"""``POST/GET/DELETE /v1/jobs[/{id}]``: long-running work on the job queue."""

from typing import Annotated

import anyio
from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from api import limiters
from api.auth import OptionalCaller
from api.deps import ClientAddress, Paging, ServicesDep
from api.problems import COMMON, responses
from api.schemas.jobs import JobOut, JobPage, JobStatus, job_json, job_response
from usecases import json_bounds
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.jobs import JobRow
from usecases.run_requests import queue, request_from_job_body

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
JOB_REQUEST = {"$ref": "#/components/schemas/JobRequest"}
"""The body of ``POST /v1/jobs`` (read raw by the route; the component is added by ``api.app``)."""
JobId = Annotated[str, Path(max_length=64, description="The job id (a UUID).")]


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    responses=responses(*COMMON, Unauthorized, Forbidden, NotFound, QuotaExceeded, Unavailable),
    openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": JOB_REQUEST}}}},
)
async def create_job(
    request: Request, principal: OptionalCaller, services: ServicesDep, client: ClientAddress
) -> JSONResponse:
    """Queue a computation; 202 + ``Location: /v1/jobs/{id}``. An identical stored run makes the job succeed at once."""
    body = await request.body()

    def queued() -> JobRow:
        return queue(services, request_from_job_body(services, body, principal), client)

    large = len(body) >= json_bounds.MIN_CHECKED_BYTES
    row = await anyio.to_thread.run_sync(queued, limiter=limiters.heavy_bodies() if large else None)
    return job_response(row, 202)


@router.get("", response_model=JobPage, responses=responses(Unauthorized, 422, 500))
def list_jobs(
    principal: OptionalCaller,
    services: ServicesDep,
    page: Paging,
    status: JobStatus | None = None,
) -> JSONResponse:
    """Jobs, newest first; pass ``next_cursor`` back as ``cursor``."""
    rows, next_cursor = services.jobs.page(principal, status=status, limit=page.limit, cursor=page.cursor)
    return JSONResponse({"items": [job_json(r) for r in rows], "next_cursor": next_cursor})


@router.get("/{job_id}", response_model=JobOut, responses=responses(Unauthorized, NotFound, 422, 500))
def get_job(job_id: JobId, principal: OptionalCaller, services: ServicesDep) -> JSONResponse:
    """Status, progress, the run it produced (``run_id``) or the problem it failed with."""
    return JSONResponse(job_json(services.jobs.visible(principal, job_id)))


@router.delete(
    "/{job_id}",
    response_model=JobOut,
    responses={202: {"model": JobOut, "description": "Cancellation requested; the job stops within seconds."}}
    | responses(Unauthorized, Forbidden, NotFound, Conflict, 422, 500),
)
def cancel_job(job_id: JobId, principal: OptionalCaller, services: ServicesDep, client: ClientAddress) -> JSONResponse:
    """Cancel: a queued job at once (200); a running one at its next progress report (202). Owner or admin only.
    A cancelled job is not deleted: ``GET /v1/jobs/{id}`` keeps answering 200 with status ``cancelled``."""
    row = services.jobs.cancel(principal, job_id, client)
    return JSONResponse(job_json(row), status_code=200 if row.status == "cancelled" else 202)
