"""Jobs over HTTP: the job body every route that queues work answers with, the job request, the job page."""

import json
from datetime import datetime
from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from api.schemas.paging import Page
from usecases.clock import utc_iso
from usecases.jobs import JobRow
from usecases.problems import Problem

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


class JobPage(Page[JobOut]):
    pass


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


ABOVE_BUDGET: dict[int | str, dict[str, Any]] = {
    202: {
        "model": JobOut,
        "description": "The cost exceeds the synchronous budget: the run was queued as a job; poll `Location`.",
    }
}
