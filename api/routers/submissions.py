"""Submissions: scoring on arrival, ``Idempotency-Key``, daily quotas, own listing, withdrawal, flags, per-item
results.

A submission is seen by its maker and by the benchmark's owners and admins (404 for anyone else); private-split
scores, breakdowns and per-item results go to the owners and admins only.
"""

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Query, Request, Response

from api import limiters
from api.auth import AnyKey, SubmissionsWrite
from api.deps import Paging, ServicesDep
from api.problems import COMMON, responses
from api.schemas.submissions import ItemScores, SubmissionList, SubmissionOut, SubmissionPatch
from usecases import json_bounds, submissions
from usecases.errors import Conflict, Forbidden, NotFound, QuotaExceeded, Unauthorized, invalid

router = APIRouter(tags=["submissions"])
SUBMISSION_IN = {"$ref": "#/components/schemas/SubmissionIn"}
"""The body of a submission (read raw by the route; the component is added by ``api.app``)."""
OWNER = (Unauthorized, Forbidden, NotFound)


JSONL_BODY = {
    "schema": {"type": "string"},
    "example": '{"item_id": "q1", "choice_idx": 2}\n{"item_id": "q2", "choice_idx": 0}\n',
}
"""A JSON Lines body: one prediction item per line (the objects of ``predictions.items``)."""


@router.post(
    "/v1/benchmarks/{benchmark_id}/submissions",
    status_code=201,
    response_model=SubmissionOut,
    responses=responses(*COMMON, *OWNER, Conflict, QuotaExceeded),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A JSON submission, or JSON Lines (application/x-ndjson): one prediction item per line, "
            "with model and metadata in the query.",
            "content": {"application/json": {"schema": SUBMISSION_IN}, submissions.JSONL_MEDIA_TYPE: JSONL_BODY},
        }
    },
)
async def create_submission(
    benchmark_id: str,
    request: Request,
    caller: SubmissionsWrite,
    services: ServicesDep,
    idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
    model: Annotated[
        str | None,
        Query(min_length=1, max_length=128, description="Model name (JSON Lines bodies only; required there)."),
    ] = None,
    metadata: Annotated[
        str | None,
        Query(
            max_length=submissions.MAX_METADATA_BYTES,
            description="A JSON object of at most 16 KiB (JSON Lines bodies only).",
        ),
    ] = None,
) -> Response:
    """Score the predictions against the current answer key and store them (``submissions:write``). The body is a
    JSON submission, or JSON Lines (``application/x-ndjson``: one prediction item per line, ``model`` and
    ``metadata`` in the query; a bad line is a 422 at ``["body", line]``). With ``Idempotency-Key``, a retry with
    the same predictions replays the first response; a different request is 422; a retry while the first is still
    running is 409. Failed scorings do not count against the daily quota. A participant's key submits to its own
    benchmark only (403 elsewhere)."""
    body = await request.body()
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    lines = media == submissions.JSONL_MEDIA_TYPE
    if lines and model is None:
        raise invalid("model is required with a JSON Lines body", ("query", "model"), "missing", "Field required")
    if not lines and (model is not None or metadata is not None):
        where = "model" if model is not None else "metadata"
        raise invalid(f"{where} goes in the JSON body", ("query", where), "extra_forbidden", "JSON Lines bodies only")

    def submitted() -> submissions.Submitted:
        if lines:
            new = submissions.parse_lines(services, benchmark_id, body, model or "", metadata)
            return submissions.submit_lines(services, caller, benchmark_id, new, idempotency_key)
        new = submissions.parse_new(services, benchmark_id, body)
        return submissions.submit(services, caller, benchmark_id, new, idempotency_key)

    large = len(body) >= json_bounds.MIN_CHECKED_BYTES
    done = await anyio.to_thread.run_sync(submitted, limiter=limiters.heavy_bodies() if large else None)
    headers = {"Idempotent-Replayed": "true"} if done.replayed else None
    return Response(done.json, 201, media_type="application/json", headers=headers)


@router.get(
    "/v1/benchmarks/{benchmark_id}/submissions",
    response_model=SubmissionList,
    responses=responses(*OWNER, 422, 500),
)
def list_submissions(
    benchmark_id: str,
    caller: AnyKey,
    services: ServicesDep,
    page: Paging,
) -> dict[str, Any]:
    """The caller's own submissions to this benchmark, newest first (every submission, withdrawn and non-public ones
    included, for the benchmark's owners and admins)."""
    items, next_cursor = submissions.list_own(services, caller, benchmark_id, page.limit, page.cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.get("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(*OWNER, 500))
def get_submission(submission_id: str, caller: AnyKey, services: ServicesDep) -> submissions.SubmissionView:
    """One submission with its scores against the current answer-key version (its maker, the benchmark's owners or
    an admin; 404 for anyone else)."""
    return submissions.get(services, caller, submission_id)


@router.get("/v1/submissions/{submission_id}/items", response_model=ItemScores, responses=responses(*OWNER, 422, 500))
def get_item_scores(
    submission_id: str,
    caller: AnyKey,
    services: ServicesDep,
    metric: Annotated[str | None, Query(max_length=64, description="A metric with per-item values.")] = None,
) -> submissions.SubmissionItemScores:
    """Per-item values of ``metric`` (default the primary; one of the scorer's ``paired_tests``) in the latest
    scoring (public items for its maker; every item for the benchmark's owners and admins; 404 for anyone else).
    Items without a value are absent."""
    return submissions.item_scores(services, caller, submission_id, metric)


@router.delete("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(*OWNER, 500))
def withdraw_submission(submission_id: str, caller: AnyKey, services: ServicesDep) -> submissions.SubmissionView:
    """Withdraw: hidden from leaderboards from now on; the rows are kept (its maker with ``submissions:write``, the
    benchmark's owners or an admin)."""
    return submissions.withdraw(services, caller, submission_id)


@router.patch("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(*COMMON, *OWNER))
def patch_submission(
    submission_id: str, body: SubmissionPatch, caller: AnyKey, services: ServicesDep
) -> submissions.SubmissionView:
    """Set ``baseline`` (the benchmark's owners and admins: listed on the leaderboards with no rank, taking none from
    the others) and/or ``public`` (its maker only: ``false`` takes it off the leaderboards, still counted in the
    daily quota and seen by its maker and the owners). Each change is in the audit log."""
    return submissions.patch(services, caller, submission_id, baseline=body.baseline, public=body.public)
