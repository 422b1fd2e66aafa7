"""Submissions: scoring on arrival, ``Idempotency-Key``, daily quotas, own listing, withdrawal, per-item results.

Private-split scores, breakdowns and per-item results are returned to admins only.
"""

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Response
from pydantic import BaseModel, Field, StringConstraints

from api import cursors
from api.auth import Principal, require
from api.deps import EnginesDep
from api.envelope import utc_iso
from api.platform import key_items, load, score_and_store
from api.problems import COMMON, ApiError, responses
from api.scoring import dumps, validate_items
from db.repositories import idempotency as idem_repo
from db.repositories import submissions as sub_repo
from db.repositories.submissions import SubmissionRow
from service.types import MAX_JSON_ARRAY, StrictModel

Submitter = Annotated[Principal, Depends(require("submissions:write"))]
AnyKey = Annotated[Principal, Depends(require("submissions:write"))]
IDEMPOTENCY_STALE = timedelta(seconds=120)


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
    items: list[ItemScoreOut]


router = APIRouter(tags=["submissions"])


def _view(conn: Any, sub: SubmissionRow, version: int, principal: Principal | None) -> dict[str, Any]:
    """The submission as ``principal`` may see it (private split only for admins)."""
    out: dict[str, Any] = {
        "id": sub.id,
        "benchmark_id": sub.benchmark_id,
        "model": sub.model,
        "metadata": json.loads(sub.meta),
        "answer_key_version": None,
        "submitted_at": utc_iso(sub.created_at),
        "withdrawn_at": utc_iso(sub.withdrawn_at) if sub.withdrawn_at else None,
        "scores": {},
        "breakdown": {},
        "coverage": None,
        "reconstructed": [],
        "private": None,
    }
    scoring = sub_repo.latest_scoring(conn, sub.id, version)
    if scoring is None:
        return out
    admin = principal is not None and principal.is_admin
    splits = ["public", "private"] if admin else ["public"]
    details = json.loads(scoring.details)
    scores: dict[str, dict[str, Any]] = {s: {} for s in splits}
    for s in sub_repo.scores(conn, scoring.id, splits):
        scores[s.split][s.metric] = {"value": s.value, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}
    public = details.get("public", {})
    out.update(
        answer_key_version=scoring.answer_key_version,
        scores=scores["public"],
        breakdown=public.get("breakdown", {}),
        coverage=public.get("coverage"),
        reconstructed=public.get("reconstructed", []),
    )
    if admin and "private" in details:
        out["private"] = {"scores": scores["private"], **details["private"]}
    return out


def _visible(principal: Principal, sub: SubmissionRow) -> None:
    if not principal.is_admin and sub.api_key_id != principal.key_id:
        raise ApiError(403, "this submission belongs to another key")


def _next_utc_midnight(now: datetime) -> datetime:
    return (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)


def _create(benchmark_id: str, body: SubmissionIn, principal: Principal, engines: Any) -> dict[str, Any]:
    meta = dumps(body.metadata)
    if len(meta) > 16 * 1024:
        raise ApiError(
            422,
            "metadata too large",
            errors=[{"loc": ["body", "metadata"], "msg": "at most 16 KiB of JSON", "type": "too_long"}],
        )
    now = datetime.now(UTC)
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = key_items(conn, loaded, version)
    preds = validate_items(loaded.spec.prediction_item_model, body.predictions.items, ("predictions", "items"))
    predictions_json = dumps([p.model_dump(mode="json") for p in preds])
    sub = SubmissionRow(0, str(uuid.uuid4()), benchmark_id, body.model, meta, principal.key_id, now, None)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    with engines.write.begin() as conn:
        used = sub_repo.count_since(conn, benchmark_id, principal.key_id, day)
        if used >= loaded.benchmark.max_submissions_per_day:
            retry = int((_next_utc_midnight(now) - now).total_seconds()) + 1
            raise ApiError(
                429,
                f"daily quota of {loaded.benchmark.max_submissions_per_day} submissions to this benchmark is used",
                headers={"Retry-After": str(retry)},
            )
        sub_repo.insert_submission(conn, sub, predictions_json)
        score_and_store(conn, loaded, sub.id, version, key, preds)
        return _view(conn, sub, version, principal)


@router.post(
    "/v1/benchmarks/{benchmark_id}/submissions",
    status_code=201,
    response_model=SubmissionOut,
    responses=responses(*COMMON, 401, 403, 404, 409),
)
def create_submission(
    benchmark_id: str,
    body: SubmissionIn,
    principal: Submitter,
    engines: EnginesDep,
    idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
) -> Response:
    """Score the predictions against the current answer key and store them. With ``Idempotency-Key``, a retry
    with the same body replays the first response; a different body is 422; a retry while the first is still
    running is 409. Failed scorings do not count against the daily quota."""
    if idempotency_key is None:
        return Response(dumps(_create(benchmark_id, body, principal, engines)), 201, media_type="application/json")
    scope = f"{principal.key_id}:{benchmark_id}:submissions"
    digest = hashlib.sha256(dumps(body.model_dump(mode="json")).encode()).hexdigest()
    now = datetime.now(UTC)
    with engines.write.begin() as conn:
        existing = idem_repo.claim(conn, scope, idempotency_key, digest, now)
        if existing is not None and existing.status_code is None:
            stale = existing.created_at.replace(tzinfo=existing.created_at.tzinfo or UTC) < now - IDEMPOTENCY_STALE
            if stale and existing.request_sha256 == digest:
                idem_repo.take_over(conn, scope, idempotency_key, digest, now - IDEMPOTENCY_STALE, now)
                existing = None
    if existing is not None:
        if existing.request_sha256 != digest:
            raise ApiError(
                422,
                "this Idempotency-Key was used with a different body",
                errors=[
                    {"loc": ["header", "Idempotency-Key"], "msg": "reused with a different body", "type": "idempotency"}
                ],
            )
        if existing.status_code is None:
            raise ApiError(409, "a request with this Idempotency-Key is still in flight")
        return Response(
            existing.response or "",
            existing.status_code,
            media_type="application/json",
            headers={"Idempotent-Replayed": "true"},
        )
    try:
        text = dumps(_create(benchmark_id, body, principal, engines))
    except BaseException:
        with engines.write.begin() as conn:
            idem_repo.release(conn, scope, idempotency_key)
        raise
    with engines.write.begin() as conn:
        idem_repo.complete(conn, scope, idempotency_key, 201, text)
    return Response(text, 201, media_type="application/json")


@router.get(
    "/v1/benchmarks/{benchmark_id}/submissions",
    response_model=SubmissionList,
    responses=responses(401, 403, 404, 422, 500),
)
def list_submissions(
    benchmark_id: str,
    principal: AnyKey,
    engines: EnginesDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """The caller's own submissions to this benchmark, newest first (every submission for admins)."""
    before = cursors.decode_seq(cursor) if cursor else None
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        rows = sub_repo.list_for_benchmark(
            conn,
            benchmark_id,
            api_key_id=principal.key_id,
            all_keys=principal.is_admin,
            limit=limit + 1,
            before_seq=before,
        )
        page = rows[:limit]
        items = [_view(conn, s, loaded.benchmark.current_version, principal) for s in page]
    return {"items": items, "next_cursor": cursors.encode(page[-1].seq) if len(rows) > limit else None}


def _load_visible(conn: Any, submission_id: str, principal: Principal) -> tuple[SubmissionRow, int]:
    sub = sub_repo.get(conn, submission_id)
    if sub is None:
        raise ApiError(404, f"no submission {submission_id!r}")
    _visible(principal, sub)
    return sub, load(conn, sub.benchmark_id).benchmark.current_version


@router.get("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(401, 403, 404, 500))
def get_submission(submission_id: str, principal: AnyKey, engines: EnginesDep) -> dict[str, Any]:
    """One submission with its scores against the current answer-key version (owner or admin)."""
    with engines.read.connect() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        return _view(conn, sub, version, principal)


@router.get("/v1/submissions/{submission_id}/items", response_model=ItemScores, responses=responses(401, 403, 404, 500))
def get_item_scores(submission_id: str, principal: AnyKey, engines: EnginesDep) -> dict[str, Any]:
    """Per-item scores of the latest scoring (public items for the owner; every item for admins)."""
    with engines.read.connect() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        scoring = sub_repo.latest_scoring(conn, sub.id, version)
        if scoring is None:
            raise ApiError(404, "this submission has no scoring against the current answer key")
        splits = ["public", "private"] if principal.is_admin else ["public"]
        rows = sub_repo.item_scores(conn, scoring.id, splits)
    return {
        "submission_id": sub.id,
        "answer_key_version": version,
        "items": [{"split": s, "item_id": i, "value": v} for s, i, v in rows],
    }


@router.delete("/v1/submissions/{submission_id}", response_model=SubmissionOut, responses=responses(401, 403, 404, 500))
def withdraw_submission(submission_id: str, principal: AnyKey, engines: EnginesDep) -> dict[str, Any]:
    """Withdraw: hidden from leaderboards from now on; the rows are kept (owner or admin)."""
    with engines.write.begin() as conn:
        sub, version = _load_visible(conn, submission_id, principal)
        sub_repo.withdraw(conn, sub.id, datetime.now(UTC))
        return _view(conn, sub_repo.get(conn, sub.id), version, principal)  # type: ignore[arg-type]
