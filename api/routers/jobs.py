"""``POST/GET/DELETE /v1/jobs[/{id}]``: long-running work on the job queue."""

import json
from datetime import datetime
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from api.auth import OptionalCaller
from api.deps import ClientAddress, ServicesDep
from api.problems import COMMON, Problem, responses
from usecases import cursors
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, Unauthorized, Unavailable
from usecases.estimator_runs import queue_call
from usecases.jobs import JobRow
from usecases.scorer_runs import queue_score

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
JobId = Annotated[str, Path(max_length=64, description="The job id (a UUID).")]
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class JobProgress(BaseModel):
    fraction: float = Field(ge=0, le=1, description="Fraction done, 0..1, as last reported by the function.")
    message: str = Field(description="Last progress message.")


class JobOut(BaseModel):
    """A job; poll ``GET /v1/jobs/{id}`` until ``status`` is terminal, then read ``/v1/runs/{run_id}``."""

    id: str
    kind: str = Field(
        description="What runs: 'estimator', 'scorer' (a stateless score request), 'rescore' (a benchmark's "
        "submissions re-scored) or 'reproduction'."
    )
    name: str
    version: str
    params_sha256: str
    status: JobStatus
    progress: JobProgress
    run_id: str | None = Field(description="The run the job produced (or found cached) once it succeeded.")
    problem: Problem | None = Field(description="Why the job failed (problem details), else null.")
    attempts: int = Field(description="How many times a worker started it (a lost worker's job re-runs).")
    cancel_requested: bool
    timeout_s: float
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class JobRequest(BaseModel):
    """A job: an estimator ``name`` and its ``params`` (the object ``POST /v1/estimators/{name}`` takes), or a
    scorer ``name`` and the score request ``POST /v1/scorers/{name}/score`` takes as ``params``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: Literal["estimator", "scorer"] = Field(description="What to run: an estimator or a stateless scoring.")
    name: str = Field(min_length=1, max_length=128, description="Registered name, e.g. compression.nml_regret.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="The estimator's params object, or the scorer's {answer_key, predictions, params} request.",
    )


class JobPage(BaseModel):
    items: list[JobOut]
    next_cursor: str | None


def job_json(row: JobRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "name": row.name,
        "version": row.version,
        "params_sha256": row.params_sha256,
        "status": row.status,
        "progress": {"fraction": row.progress_fraction, "message": row.progress_message},
        "run_id": row.run_id,
        "problem": json.loads(row.problem) if row.problem else None,
        "attempts": row.attempts,
        "cancel_requested": row.cancel_requested,
        "timeout_s": row.timeout_s,
        "created_at": utc_iso(row.created_at),
        "started_at": utc_iso(row.started_at) if row.started_at else None,
        "finished_at": utc_iso(row.finished_at) if row.finished_at else None,
    }


def job_response(row: JobRow, status_code: int) -> JSONResponse:
    return JSONResponse(job_json(row), status_code=status_code, headers={"Location": f"/v1/jobs/{row.id}"})


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    responses=responses(*COMMON, Unauthorized, Forbidden, NotFound, QuotaExceeded, Unavailable),
)
async def create_job(
    body: JobRequest, principal: OptionalCaller, services: ServicesDep, client: ClientAddress
) -> JSONResponse:
    """Queue a computation; 202 + ``Location: /v1/jobs/{id}``. An identical stored run makes the job succeed at once."""
    queue = queue_call if body.kind == "estimator" else queue_score
    row = await anyio.to_thread.run_sync(queue, services, body.name, body.params, principal, client)
    return job_response(row, 202)


@router.get("", response_model=JobPage, responses=responses(Unauthorized, 422, 500))
def list_jobs(
    principal: OptionalCaller,
    services: ServicesDep,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=256)] = None,
) -> JSONResponse:
    """Jobs, newest first; pass ``next_cursor`` back as ``cursor``."""
    rows, last = services.jobs.page(principal, status=status, limit=limit, before_seq=cursors.decode_seq(cursor))
    return JSONResponse(
        {"items": [job_json(r) for r in rows], "next_cursor": cursors.encode(last) if last is not None else None}
    )


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
    """Cancel: a queued job at once (200); a running one at its next progress report (202). Owner or admin only."""
    row = services.jobs.cancel(principal, job_id, client)
    return JSONResponse(job_json(row), status_code=200 if row.status == "cancelled" else 202)
