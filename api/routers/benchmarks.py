"""Benchmarks: registration, answer-key versions, re-scoring, leaderboards and paired comparison."""

import csv
import io
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Response
from fastapi.responses import JSONResponse

from api.auth import CHECK_CREDENTIALS, Admin, AnyKey, BenchmarksWrite, OptionalCaller
from api.deps import ClientAddress, PageQuery, Paging, ServicesDep, page_query
from api.problems import COMMON, responses
from api.schemas.benchmarks import (
    AnswerKeyIn,
    AnswerKeyVersionItems,
    AnswerKeyVersionList,
    AnswerKeyVersionOut,
    BenchmarkDetail,
    BenchmarkIn,
    BenchmarkList,
    BenchmarkOut,
    CompareOut,
    CrossModalOut,
    Leaderboard,
    RescoreOut,
)
from usecases import benchmarks, phases
from usecases.benchmarks import BenchmarkView, NewVersion, VersionView
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, NotFound, Unauthorized


@dataclass(frozen=True)
class LeaderboardQuery:
    """What a leaderboard page shows: a split, the metric ranked by (default the primary), each model's best or
    latest submission, and which page."""

    split: Literal["public", "private"]
    metric: str | None
    rank_by: Literal["best", "latest"]
    page: PageQuery


def leaderboard_query(
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
    page: Annotated[PageQuery, Depends(page_query(100))] = PageQuery(100, None),
) -> LeaderboardQuery:
    return LeaderboardQuery(split, metric, rank_by, page)


LeaderboardParams = Annotated[LeaderboardQuery, Depends(leaderboard_query)]
"""The query of the leaderboard in each of its formats (100 rows a page by default)."""
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
def create_benchmark(body: BenchmarkIn, caller: BenchmarksWrite, services: ServicesDep) -> dict[str, Any]:
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
def list_benchmarks(services: ServicesDep, page: Paging) -> dict[str, Any]:
    """Benchmarks ordered by name; pass ``next_cursor`` back as ``cursor``."""
    views, next_cursor = benchmarks.list_benchmarks(services, page.limit, page.cursor)
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
    caller: BenchmarksWrite,
    services: ServicesDep,
    client: ClientAddress,
    response: Response,
) -> dict[str, Any]:
    """A new immutable answer-key version, current from now on, and a re-scoring of every stored submission
    against it (201; content identical to the current version changes nothing, 200; an earlier version's content
    makes a new version with that content): as a job (``rescore_job_id``, ``Location``) when a job queue
    runs, else inline (``rescored`` = how many)."""
    new = benchmarks.put_answer_key(services, caller, benchmark_id, body.items, client)
    return _new_version(benchmark_id, new, response)


def _new_version(benchmark_id: str, new: NewVersion, response: Response) -> dict[str, Any]:
    """The answer to a new current answer key: 201 when a version was made (``Location``: its re-scoring job)."""
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


VersionNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="An answer-key version (1 is the first).")]
OWNERS = (Unauthorized, Forbidden, NotFound)


def _version(view: VersionView) -> dict[str, Any]:
    return {**view.row.__dict__, "current": view.current}


@router.get(
    "/{benchmark_id}/answer-key/versions",
    response_model=AnswerKeyVersionList,
    responses=responses(*OWNERS, 422, 500),
)
def answer_key_versions(benchmark_id: str, caller: AnyKey, services: ServicesDep, page: Paging) -> dict[str, Any]:
    """The answer-key versions, newest first, with the current one marked (owners and admins); never the items."""
    views, next_cursor = benchmarks.answer_key_versions(services, caller, benchmark_id, page.limit, page.cursor)
    return {"items": [_version(v) for v in views], "next_cursor": next_cursor}


@router.get(
    "/{benchmark_id}/answer-key/versions/{version}",
    response_model=AnswerKeyVersionItems,
    responses=responses(*OWNERS, 422, 500),
)
def answer_key_version(
    benchmark_id: str, version: VersionNumber, caller: AnyKey, services: ServicesDep
) -> dict[str, Any]:
    """One answer-key version with its items, the private split's included (owners and admins)."""
    view = benchmarks.answer_key_version(services, caller, benchmark_id, version)
    return {**_version(view), "benchmark_id": benchmark_id, "items": view.items}


@router.post(
    "/{benchmark_id}/answer-key/versions/{version}/restore",
    response_model=AnswerKeyVersionOut,
    responses=responses(*WRITE, NotFound, 422, 500),
)
def restore_answer_key(
    benchmark_id: str,
    version: VersionNumber,
    caller: BenchmarksWrite,
    services: ServicesDep,
    client: ClientAddress,
    response: Response,
) -> dict[str, Any]:
    """Make an earlier version's items the current answer key, as a PUT of those items does: a new version (201)
    and a re-scoring of every submission (a job, or inline), or nothing when they are the current content (200);
    audited as ``answer_key.restored`` with the version restored."""
    new = benchmarks.restore_answer_key(services, caller, benchmark_id, version, client)
    return _new_version(benchmark_id, new, response)


@router.post("/{benchmark_id}/rescore", response_model=RescoreOut, responses=responses(*WRITE, NotFound, 422, 500))
def rescore(benchmark_id: str, caller: Admin, services: ServicesDep) -> dict[str, Any]:
    """Admin: a new scoring of every submission against the current version; earlier score rows are kept."""
    version, n = benchmarks.rescore(services, caller, benchmark_id)
    return {"benchmark_id": benchmark_id, "answer_key_version": version, "rescored": n}


def _csv(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # RFC 4180; also quotes a cell holding a lone CR or LF
    w.writerow(
        ["rank", "model", "submission_id", "submitted_at", "answer_key_version"]
        + [c for m in metrics for c in (m, f"{m}_ci_low", f"{m}_ci_high")]
    )
    for r in rows:
        cells = [r["rank"], _text(r["model"]), r["submission_id"], utc_iso(r["submitted_at"]), r["answer_key_version"]]
        for m in metrics:
            s = r["scores"].get(m) or {}
            cells += [_num(s.get("value")), _num(s.get("ci_low")), _num(s.get("ci_high"))]
        w.writerow(cells)
    return buf.getvalue()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection)."""


def _text(value: str) -> str:
    """A user-provided text cell: prefixed with ``'`` when it starts like a formula, so it stays text."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


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
    query: LeaderboardParams,
    format: Literal["json", "csv", "ndjson"] = "json",
) -> Response:
    """Ranked rows of the current answer-key version (withdrawn submissions hidden). ``format=csv`` has the columns
    ``rank,model,submission_id,submitted_at,answer_key_version`` then ``<m>,<m>_ci_low,<m>_ci_high`` per metric."""
    phases.freeze_ended(services, benchmark_id)
    page = benchmarks.leaderboard(
        services,
        principal,
        benchmark_id,
        split=query.split,
        metric=query.metric,
        rank_by=query.rank_by,
        limit=query.page.limit,
        cursor=query.page.cursor,
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
    query: LeaderboardParams,
) -> Response:
    """``leaderboard?format=csv`` as an operation of its own, with one response type (for generated clients)."""
    return leaderboard(benchmark_id, services, principal, query, "csv")


@router.get(
    "/{benchmark_id}/leaderboard.ndjson",
    response_class=Response,
    responses=_leaderboard_file("application/x-ndjson", "NDJSON (one JSON row per line)"),
)
def leaderboard_ndjson(
    benchmark_id: str,
    services: ServicesDep,
    principal: OptionalCaller,
    query: LeaderboardParams,
) -> Response:
    """``leaderboard?format=ndjson`` as an operation of its own, with one response type (for generated clients)."""
    return leaderboard(benchmark_id, services, principal, query, "ndjson")


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
    phases.freeze_ended(services, benchmark_id)
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
) -> benchmarks.CrossModalGain:
    """RAVEN-Bench cross-modal gain G_cm = S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only)) and modality
    reliance from the latest scorings of the given submissions against the current answer-key version."""
    phases.freeze_ended(services, benchmark_id)
    return benchmarks.raven_cross_modal(services, principal, benchmark_id, submissions.split(","), split=split)
