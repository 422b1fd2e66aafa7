"""Submissions: scoring on arrival, ``Idempotency-Key``, daily quotas, own listing, withdrawal, per-item results.

Private-split scores, breakdowns and per-item results are returned to admins only.
"""

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from pydantic import BaseModel, Field, StringConstraints

from api.auth import KeyHolder
from api.deps import ServicesDep
from api.problems import COMMON, responses
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases import submissions
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, Unauthorized


class PredictionsIn(StrictModel):
    items: list[dict[str, Any]] = Field(
        max_length=MAX_JSON_ARRAY, description="Items of the scorer's prediction_item_schema, each with item_id."
    )


class SubmissionIn(StrictModel):
    model: Annotated[str, StringConstraints(min_length=1, max_length=128)] = Field(description="Model name.")
    predictions: PredictionsIn
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form JSON (at most 16 KiB).")


class SubmissionOut(BaseModel):
    id: str
    benchmark_id: str
    model: str
    metadata: dict[str, Any]
    answer_key_version: int | None
    submitted_at: datetime
    withdrawn_at: datetime | None
    scores: dict[str, dict[str, Any]] = Field(description="Public-split scores: {metric: {value, ci_low, ci_high, n}}.")
    breakdown: dict[str, Any]
    coverage: float | None
    reconstructed: list[str]
    private: dict[str, Any] | None = Field(
        default=None, description="Private-split scores, breakdown and coverage (admins only)."
    )


class SubmissionList(BaseModel):
    items: list[SubmissionOut]
    next_cursor: str | None


class ItemScoreOut(BaseModel):
    split: str
    item_id: str
    value: float


class ItemScores(BaseModel):
    submission_id: str
    answer_key_version: int
    metric: str
    items: list[ItemScoreOut]


router = APIRouter(tags=["submissions"])
OWNER = (Unauthorized, Forbidden, NotFound)


@router.post(
    "/v1/benchmarks/{benchmark_id}/submissions",
    status_code=201,
    response_model=SubmissionOut,
    responses=responses(*COMMON, *OWNER, Conflict, QuotaExceeded),
)
def create_submission(
    benchmark_id: str,
    body: SubmissionIn,
    caller: KeyHolder,
    services: ServicesDep,
    idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
) -> Response:
    """Score the predictions against the current answer key and store them (``submissions:write``). With
    ``Idempotency-Key``, a retry with the same body replays the first response; a different body is 422; a retry
    while the first is still running is 409. Failed scorings do not count against the daily quota."""
    new = submissions.NewSubmission(body.model, body.predictions.items, body.metadata)
    done = submissions.submit(services, caller, benchmark_id, new, idempotency_key)
    headers = {"Idempotent-Replayed": "true"} if done.replayed else None
    return Response(done.json, 201, media_type="application/json", headers=headers)


@router.get(
    "/v1/benchmarks/{benchmark_id}/submissions",
    response_model=SubmissionList,
    responses=responses(*OWNER, 422, 500),
)
def list_submissions(
    benchmark_id: str,
    caller: KeyHolder,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """The caller's own submissions to this benchmark, newest first (every submission for admins)."""
    items, next_cursor = submissions.list_own(services, caller, benchmark_id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.get("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(*OWNER, 500))
def get_submission(submission_id: str, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """One submission with its scores against the current answer-key version (owner or admin)."""
    return submissions.get(services, caller, submission_id)


@router.get("/v1/submissions/{submission_id}/items", response_model=ItemScores, responses=responses(*OWNER, 422, 500))
def get_item_scores(
    submission_id: str,
    caller: KeyHolder,
    services: ServicesDep,
    metric: Annotated[str | None, Query(max_length=64, description="A metric with per-item values.")] = None,
) -> dict[str, Any]:
    """Per-item values of ``metric`` (default the primary; one of the scorer's ``paired_tests``) in the latest
    scoring (public items for the owner; every item for admins). Items without a value are absent."""
    return submissions.item_scores(services, caller, submission_id, metric)


@router.delete("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(*OWNER, 500))
def withdraw_submission(submission_id: str, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Withdraw: hidden from leaderboards from now on; the rows are kept (owner or admin)."""
    return submissions.withdraw(services, caller, submission_id)
