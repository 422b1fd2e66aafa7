"""Benchmarks: registration, answer-key versions, re-scoring, leaderboards and paired comparison."""

import csv
import io
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints

from api.auth import CHECK_CREDENTIALS, KeyHolder, OptionalCaller
from api.deps import ClientAddress, ServicesDep
from api.problems import COMMON, responses
from service.types import MAX_JSON_ARRAY, StrictModel
from usecases import benchmarks
from usecases.benchmarks import BenchmarkView
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class AnswerKeyIn(StrictModel):
    items: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_JSON_ARRAY,
        description="Items of the scorer's answer_key_item_schema; each has a unique item_id and a split "
        "(public by default, or private).",
    )


class BenchmarkIn(StrictModel):
    name: Name = Field(description="Unique name (letters, digits, . _ -).")
    scorer: str = Field(max_length=64, description="A registered scorer (GET /v1/scorers).")
    description: str = Field(default="", max_length=4000)
    scorer_params: dict[str, Any] = Field(default_factory=dict, description="The scorer's params, fixed for good.")
    max_submissions_per_day: int = Field(
        default=0, ge=0, le=100_000, description="Successful submissions per key per UTC day; 0 = the server default."
    )
    answer_key: AnswerKeyIn


class VersionOut(BaseModel):
    version: int
    sha256: str
    n_public: int
    n_private: int
    created_at: datetime


class BenchmarkOut(BaseModel):
    id: str
    name: str
    scorer: str
    description: str
    scorer_params: dict[str, Any]
    max_submissions_per_day: int
    answer_key_version: int
    answer_key_sha256: str
    primary_metric: str
    created_at: datetime


class BenchmarkDetail(BenchmarkOut):
    versions: list[VersionOut]


class BenchmarkList(BaseModel):
    items: list[BenchmarkOut]
    next_cursor: str | None


class AnswerKeyVersionOut(BaseModel):
    benchmark_id: str
    answer_key_version: int = Field(description="The current version after the call.")
    answer_key_sha256: str
    created: bool = Field(
        description="False when the content is the current version's (nothing changed); an earlier version's "
        "content becomes a new current version."
    )
    rescored: int | None = Field(description="Submissions re-scored inline (null when a job does it).")
    rescore_job_id: str | None = Field(description="The job re-scoring the stored submissions (GET /v1/jobs/{id}).")


class RescoreOut(BaseModel):
    benchmark_id: str
    answer_key_version: int
    rescored: int


class LeaderboardRow(BaseModel):
    rank: int
    model: str
    submission_id: str
    submitted_at: datetime
    answer_key_version: int = Field(description="The answer-key version these scores are against.")
    pending: bool = Field(
        description="True while the re-scoring after a new answer-key version has not reached this submission: "
        "the scores are its previous version's."
    )
    scores: dict[str, dict[str, Any]]


class Leaderboard(BaseModel):
    benchmark_id: str
    split: str
    metric: str
    higher_is_better: bool
    rank_by: str
    answer_key_version: int
    items: list[LeaderboardRow]
    next_cursor: str | None


class CompareOut(BaseModel):
    a: str
    b: str
    split: str
    metric: str = Field(description="The metric whose per-item values were compared.")
    n_common: int
    test: Literal["mcnemar_exact", "wilcoxon_signed_rank", "paired_bootstrap"]
    mean_a: float
    mean_b: float
    result: dict[str, Any]


class CrossModalOut(BaseModel):
    """RAVEN-Bench's cross-modal gain of one model's submissions, one per input setting."""

    benchmark_id: str
    split: str
    answer_key_version: int
    submissions: dict[str, str] = Field(description="Setting (eo_only, ir_only, eo_ir) → submission id.")
    s_main: dict[str, float] = Field(description="S_main of each given setting.")
    g_cm: float | None = Field(
        description="S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only)); null unless all three settings are given."
    )
    reliance_eo: float | None = Field(description="S_main(eo_only)/S_main(eo_ir) [R].")
    reliance_ir: float | None = Field(description="S_main(ir_only)/S_main(eo_ir) [R].")
    modality_matrix: dict[str, dict[str, float | None]] = Field(
        description="Setting → accuracy per modality requirement (EO, IR, EO+IR) [R]."
    )
    without_required_modality: dict[str, float | None] = Field(
        description="Accuracy on IR questions in eo_only and on EO questions in ir_only [R]."
    )
    missing_settings: list[str]
    reconstructed: list[str]


router = APIRouter(
    prefix="/v1/benchmarks", tags=["benchmarks"], dependencies=[CHECK_CREDENTIALS], responses=responses(Unauthorized)
)
WRITE = (Unauthorized, Forbidden)


def _out(view: BenchmarkView) -> dict[str, Any]:
    row = view.row
    out = {
        "id": row.id,
        "name": row.name,
        "scorer": row.scorer,
        "description": row.description,
        "scorer_params": json.loads(row.scorer_params),
        "max_submissions_per_day": row.max_submissions_per_day,
        "answer_key_version": row.current_version,
        "answer_key_sha256": view.sha256,
        "primary_metric": view.primary_metric,
        "created_at": row.created_at,
    }
    if view.versions is not None:
        out["versions"] = [v.__dict__ for v in view.versions]
    return out


@router.post("", status_code=201, response_model=BenchmarkOut, responses=responses(*COMMON, *WRITE, Conflict))
def create_benchmark(body: BenchmarkIn, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Register a benchmark with its scorer, fixed scorer params and answer key (version 1)."""
    view = benchmarks.create_benchmark(
        services,
        caller,
        name=body.name,
        scorer=body.scorer,
        description=body.description,
        scorer_params=body.scorer_params,
        max_submissions_per_day=body.max_submissions_per_day,
        answer_key=body.answer_key.items,
    )
    return _out(view)


@router.get("", response_model=BenchmarkList, responses=responses(422, 500))
def list_benchmarks(
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> dict[str, Any]:
    """Benchmarks ordered by name; pass ``next_cursor`` back as ``cursor``."""
    views, next_cursor = benchmarks.list_benchmarks(services, limit, cursor)
    return {"items": [_out(v) for v in views], "next_cursor": next_cursor}


@router.get("/{benchmark_id}", response_model=BenchmarkDetail, responses=responses(NotFound, 500))
def get_benchmark(benchmark_id: str, services: ServicesDep) -> dict[str, Any]:
    """One benchmark with every answer-key version (content hash and split sizes; never the items)."""
    return _out(benchmarks.get_benchmark(services, benchmark_id))


@router.put(
    "/{benchmark_id}/answer-key",
    response_model=AnswerKeyVersionOut,
    responses=responses(*COMMON, *WRITE, NotFound),
)
def put_answer_key(
    benchmark_id: str,
    body: AnswerKeyIn,
    caller: KeyHolder,
    services: ServicesDep,
    client: ClientAddress,
    response: Response,
) -> dict[str, Any]:
    """A new immutable answer-key version, current from now on, and a re-scoring of every stored submission
    against it (201; content identical to the current version changes nothing, 200; an earlier version's content
    makes a new version with that content): as a job (``rescore_job_id``, ``Location``) when a job queue
    runs, else inline (``rescored`` = how many)."""
    new = benchmarks.put_answer_key(services, caller, benchmark_id, body.items, client)
    if new.created:
        response.status_code = 201
    if new.rescore_job is not None:
        response.headers["Location"] = f"/v1/jobs/{new.rescore_job.id}"
    return {
        "benchmark_id": benchmark_id,
        "answer_key_version": new.version,
        "answer_key_sha256": new.sha256,
        "created": new.created,
        "rescored": new.rescored,
        "rescore_job_id": new.rescore_job.id if new.rescore_job else None,
    }


@router.post("/{benchmark_id}/rescore", response_model=RescoreOut, responses=responses(*WRITE, NotFound, 422, 500))
def rescore(benchmark_id: str, caller: KeyHolder, services: ServicesDep) -> dict[str, Any]:
    """Admin: a new scoring of every submission against the current version; earlier score rows are kept."""
    version, n = benchmarks.rescore(services, caller, benchmark_id)
    return {"benchmark_id": benchmark_id, "answer_key_version": version, "rescored": n}


def _csv(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["rank", "model", "submission_id", "submitted_at", "answer_key_version"]
        + [c for m in metrics for c in (m, f"{m}_ci_low", f"{m}_ci_high")]
    )
    for r in rows:
        cells = [r["rank"], r["model"], r["submission_id"], utc_iso(r["submitted_at"]), r["answer_key_version"]]
        for m in metrics:
            s = r["scores"].get(m) or {}
            cells += [_num(s.get("value")), _num(s.get("ci_low")), _num(s.get("ci_high"))]
        w.writerow(cells)
    return buf.getvalue()


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def _row_json(r: dict[str, Any]) -> dict[str, Any]:
    return {**r, "submitted_at": utc_iso(r["submitted_at"])}


@router.get(
    "/{benchmark_id}/leaderboard",
    response_model=Leaderboard,
    responses={
        **responses(Unauthorized, Forbidden, NotFound, 422, 500),
        200: {
            "description": "The ranked rows: JSON, or with format=csv text/csv, with format=ndjson "
            "application/x-ndjson "
            "(generated clients: the leaderboard.csv and leaderboard.ndjson operations have one response type each).",
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        },
    },
)
def leaderboard(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    format: Literal["json", "csv", "ndjson"] = "json",
) -> Response:
    """Ranked rows of the current answer-key version (withdrawn submissions hidden). ``format=csv`` has the columns
    ``rank,model,submission_id,submitted_at,answer_key_version`` then ``<m>,<m>_ci_low,<m>_ci_high`` per metric."""
    page = benchmarks.leaderboard(
        services, principal, benchmark_id, split=split, metric=metric, rank_by=rank_by, limit=limit, cursor=cursor
    )
    headers = {"X-Next-Cursor": page.next_cursor} if page.next_cursor else {}
    if format == "csv":
        return Response(_csv(page.rows, page.metrics_present), media_type="text/csv", headers=headers)
    if format == "ndjson":
        body = "".join(json.dumps(_row_json(r), sort_keys=True) + "\n" for r in page.rows)
        return Response(body, media_type="application/x-ndjson", headers=headers)
    return JSONResponse(
        {
            "benchmark_id": page.benchmark_id,
            "split": page.split,
            "metric": page.metric,
            "higher_is_better": page.higher_is_better,
            "rank_by": page.rank_by,
            "answer_key_version": page.answer_key_version,
            "items": [_row_json(r) for r in page.rows],
            "next_cursor": page.next_cursor,
        }
    )


def _leaderboard_file(media_type: str, what: str) -> dict:
    return {
        200: {"description": f"The leaderboard as {what}.", "content": {media_type: {"schema": {"type": "string"}}}},
        **responses(Unauthorized, Forbidden, NotFound, 422, 500),
    }


@router.get("/{benchmark_id}/leaderboard.csv", response_class=Response, responses=_leaderboard_file("text/csv", "CSV"))
def leaderboard_csv(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> Response:
    """``leaderboard?format=csv`` as an operation of its own, with one response type (for generated clients)."""
    return leaderboard(benchmark_id, services, principal, split, metric, rank_by, limit, cursor, "csv")


@router.get(
    "/{benchmark_id}/leaderboard.ndjson",
    response_class=Response,
    responses=_leaderboard_file("application/x-ndjson", "NDJSON (one JSON row per line)"),
)
def leaderboard_ndjson(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> Response:
    """``leaderboard?format=ndjson`` as an operation of its own, with one response type (for generated clients)."""
    return leaderboard(benchmark_id, services, principal, split, metric, rank_by, limit, cursor, "ndjson")


@router.get(
    "/{benchmark_id}/compare",
    response_model=CompareOut,
    responses=responses(Unauthorized, Forbidden, NotFound, 422, 500),
)
def compare(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    a: Annotated[str, Query(max_length=64)],
    b: Annotated[str, Query(max_length=64)],
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64, description="A metric with per-item values.")] = None,
    n_resamples: Annotated[int, Query(ge=100, le=10_000)] = 2000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> dict[str, Any]:
    """Paired comparison of two submissions on the per-item values of ``metric`` (default the primary; one of the
    scorer's ``paired_tests``) for their common items of the current version: exact McNemar when every value is
    0/1, else the scorer's declared test (Wilcoxon signed-rank, or a seeded paired percentile bootstrap)."""
    result = benchmarks.compare(
        services, principal, benchmark_id, a, b, split=split, metric=metric, n_resamples=n_resamples, seed=seed
    )
    return result.model_dump()


@router.get(
    "/{benchmark_id}/raven/cross_modal",
    response_model=CrossModalOut,
    responses=responses(Unauthorized, Forbidden, NotFound, 422, 500),
)
def raven_cross_modal(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    submissions: Annotated[
        str,
        Query(
            max_length=200,
            description="Comma-separated ids of up to three submissions of one model, one per input setting "
            "(each submission's metadata.setting: eo_only, ir_only or eo_ir).",
        ),
    ],
    split: Literal["public", "private"] = "public",
) -> dict[str, Any]:
    """RAVEN-Bench cross-modal gain G_cm = S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only)) and modality
    reliance from the latest scorings of the given submissions against the current answer-key version."""
    return benchmarks.raven_cross_modal(services, principal, benchmark_id, submissions.split(","), split=split)
