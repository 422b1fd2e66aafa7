"""Benchmarks: registration, answer-key versions, re-scoring, leaderboards and paired comparison."""

import bisect
import csv
import io
import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints

from api import cursors
from api.auth import OptionalPrincipal, Principal, require
from api.deps import EnginesDep, SettingsDep
from api.envelope import utc_iso
from api.platform import Loaded, load, rescore_all
from api.problems import COMMON, ApiError, responses
from api.scoring import canonical_key, check_unique, validate_items
from db.repositories import benchmarks as bench_repo
from db.repositories import submissions as sub_repo
from db.repositories.benchmarks import BenchmarkRow, VersionRow
from service.errors import InvalidInput
from service.registry import SCORERS
from service.stats import mcnemar, paired_bootstrap
from service.types import MAX_JSON_ARRAY, StrictModel

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
Writer = Annotated[Principal, Depends(require("benchmarks:write"))]


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
    answer_key_version: int
    answer_key_sha256: str
    created: bool = Field(description="False when identical content matched an existing version.")
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
    answer_key_version: int
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
    n_common: int
    test: Literal["mcnemar_exact", "paired_bootstrap"]
    mean_a: float
    mean_b: float
    result: dict[str, Any]


router = APIRouter(prefix="/v1/benchmarks", tags=["benchmarks"])


def _out(row: BenchmarkRow, sha: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "scorer": row.scorer,
        "description": row.description,
        "scorer_params": json.loads(row.scorer_params),
        "max_submissions_per_day": row.max_submissions_per_day,
        "answer_key_version": row.current_version,
        "answer_key_sha256": sha,
        "primary_metric": SCORERS[row.scorer].primary_metric,
        "created_at": row.created_at,
    }


def _versions_out(versions: list[VersionRow]) -> list[dict[str, Any]]:
    return [v.__dict__ for v in versions]


def _validated_key(loaded_scorer: str, items: list[dict[str, Any]]) -> tuple[list[Any], str, str, int, int]:
    spec = SCORERS[loaded_scorer]
    key = validate_items(spec.answer_key_item_model, items, ("answer_key", "items"))
    check_unique(key, ("answer_key", "items"))
    text, sha = canonical_key(key)
    n_private = sum(1 for k in key if k.split == "private")
    return key, text, sha, len(key) - n_private, n_private


def _owner_or_admin(principal: Principal, row: BenchmarkRow) -> None:
    if not principal.is_admin and principal.key_id != row.owner_key_id:
        raise ApiError(403, "only the benchmark's owner or an admin may do this")


@router.post("", status_code=201, response_model=BenchmarkOut, responses=responses(*COMMON, 401, 403, 409))
def create_benchmark(
    body: BenchmarkIn, principal: Writer, engines: EnginesDep, settings: SettingsDep
) -> dict[str, Any]:
    """Register a benchmark with its scorer, fixed scorer params and answer key (version 1)."""
    spec = SCORERS.get(body.scorer)
    if spec is None:
        raise InvalidInput(f"unknown scorer {body.scorer!r}; see GET /v1/scorers", ("scorer",))
    try:
        params = spec.params_model.model_validate(body.scorer_params)
    except Exception as exc:
        errors = [
            {"loc": ["body", "scorer_params", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors()  # type: ignore[attr-defined]
        ]
        raise ApiError(422, "scorer_params failed validation", errors=errors) from exc
    _, text, sha, n_public, n_private = _validated_key(body.scorer, body.answer_key.items)
    now = datetime.now(UTC)
    row = BenchmarkRow(
        id=str(uuid.uuid4()),
        name=body.name,
        scorer=body.scorer,
        description=body.description,
        scorer_params=json.dumps(params.model_dump(mode="json"), sort_keys=True, separators=(",", ":")),
        max_submissions_per_day=body.max_submissions_per_day or settings.submissions_per_day,
        owner_key_id=principal.key_id,
        current_version=1,
        created_at=now,
    )
    with engines.write.begin() as conn:
        if not bench_repo.create(conn, row, VersionRow(1, sha, n_public, n_private, now), text):
            raise ApiError(409, f"a benchmark named {body.name!r} exists")
    return _out(row, sha)


@router.get("", response_model=BenchmarkList, responses=responses(422, 500))
def list_benchmarks(
    engines: EnginesDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> dict[str, Any]:
    """Benchmarks ordered by name; pass ``next_cursor`` back as ``cursor``."""
    with engines.read.connect() as conn:
        rows = bench_repo.list_all(conn, limit + 1, cursors.decode_str(cursor) if cursor else None)
        page = rows[:limit]
        shas = bench_repo.current_sha256(conn, [r.id for r in page])
    return {
        "items": [_out(r, shas[r.id]) for r in page],
        "next_cursor": cursors.encode(page[-1].name) if len(rows) > limit else None,
    }


@router.get("/{benchmark_id}", response_model=BenchmarkDetail, responses=responses(404, 500))
def get_benchmark(benchmark_id: str, engines: EnginesDep) -> dict[str, Any]:
    """One benchmark with every answer-key version (content hash and split sizes; never the items)."""
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        versions = bench_repo.versions(conn, benchmark_id)
    row = loaded.benchmark
    return {**_out(row, versions[row.current_version - 1].sha256), "versions": _versions_out(versions)}


@router.put(
    "/{benchmark_id}/answer-key",
    response_model=AnswerKeyVersionOut,
    responses=responses(*COMMON, 401, 403, 404),
)
def put_answer_key(
    benchmark_id: str,
    body: AnswerKeyIn,
    principal: Writer,
    engines: EnginesDep,
    request: Request,
    response: Response,
) -> dict[str, Any]:
    """A new immutable answer-key version (identical content returns the existing version, 200) and a re-scoring
    of every stored submission against it (201): as a job (``rescore_job_id``, ``Location``) when a job queue
    runs, else inline (``rescored`` = how many)."""
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
    _owner_or_admin(principal, loaded.benchmark)
    _, text, sha, n_public, n_private = _validated_key(loaded.benchmark.scorer, body.items)
    with engines.write.begin() as conn:
        existing = bench_repo.version_by_sha(conn, benchmark_id, sha)
        if existing is None:
            version = bench_repo.add_version(conn, benchmark_id, sha, text, n_public, n_private, datetime.now(UTC))
    out: dict[str, Any] = {
        "benchmark_id": benchmark_id,
        "answer_key_sha256": sha,
        "created": existing is None,
        "rescored": 0,
        "rescore_job_id": None,
    }
    if existing is not None:
        return {**out, "answer_key_version": existing.version}
    response.status_code = 201
    out["answer_key_version"] = version.version
    jobs = request.app.state.jobs
    if jobs.available:
        job = jobs.submit(
            kind="rescore",
            name=benchmark_id,
            version="1",
            params_json=json.dumps({"answer_key_version": version.version}),
            api_key_id=principal.key_id,
            client=request.client.host if request.client else None,
        )
        response.headers["Location"] = f"/v1/jobs/{job.id}"
        return {**out, "rescored": None, "rescore_job_id": job.id}
    return {**out, "rescored": rescore_all(engines, benchmark_id)}


@router.post("/{benchmark_id}/rescore", response_model=RescoreOut, responses=responses(401, 403, 404, 422, 500))
def rescore(benchmark_id: str, principal: Annotated[Principal, Depends(require("admin"))], engines: EnginesDep) -> dict:
    """Admin: a new scoring of every submission against the current version; earlier score rows are kept."""
    n = rescore_all(engines, benchmark_id)
    with engines.read.connect() as conn:
        version = load(conn, benchmark_id).benchmark.current_version
    return {"benchmark_id": benchmark_id, "answer_key_version": version, "rescored": n}


def _check_split(split: str, principal: Principal | None) -> None:
    if split == "private" and (principal is None or not principal.is_admin):
        raise ApiError(403, "private-split scores are visible to admins only")


def _sort_key(row: dict[str, Any], metric: str, sign: float) -> tuple:
    """Best first by metric value, then by ci_low, then the earlier submission, then the submission id."""
    s = row["scores"][metric]
    ci = sign * s["ci_low"] if s["ci_low"] is not None else float("inf")
    return (sign * s["value"], ci, utc_iso(row["submitted_at"]), row["submission_id"])


def _encode_rank_cursor(key: tuple) -> str:
    """Keyset cursor of a leaderboard page: the sort key of its last row (a missing ci_low as null)."""
    value, ci, submitted_at, submission_id = key
    return cursors.encode([value, None if ci == float("inf") else ci, submitted_at, submission_id])


def _decode_rank_cursor(cursor: str) -> tuple:
    key = cursors.decode(cursor)
    ok = (
        isinstance(key, list)
        and len(key) == 4
        and isinstance(key[0], int | float)
        and (key[1] is None or isinstance(key[1], int | float))
        and all(isinstance(k, str) for k in key[2:])
    )
    if not ok:
        raise cursors.invalid()
    return (float(key[0]), float("inf") if key[1] is None else float(key[1]), key[2], key[3])


def leaderboard_rows(
    loaded: Loaded, rows: list[dict[str, Any]], metric: str, rank_by: str
) -> tuple[list[dict[str, Any]], list[tuple]]:
    """Rank submissions: one row per model (its best or latest submission), deterministic ties. Returns the
    ranked rows and their sort keys (ascending; the keyset for cursors)."""
    sign = -1.0 if loaded.spec.metrics[metric].higher_is_better else 1.0
    rows = [r for r in rows if metric in r["scores"]]
    chosen: dict[str, dict[str, Any]] = {}
    for r in rows:
        cur = chosen.get(r["model"])
        if cur is None:
            chosen[r["model"]] = r
        elif rank_by == "latest":
            if (utc_iso(r["submitted_at"]), r["submission_id"]) > (utc_iso(cur["submitted_at"]), cur["submission_id"]):
                chosen[r["model"]] = r
        elif _sort_key(r, metric, sign) < _sort_key(cur, metric, sign):
            chosen[r["model"]] = r
    ordered = sorted(chosen.values(), key=lambda r: _sort_key(r, metric, sign))
    version = loaded.benchmark.current_version
    ranked = [{"rank": i + 1, **r, "answer_key_version": version} for i, r in enumerate(ordered)]
    return ranked, [_sort_key(r, metric, sign) for r in ordered]


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
        **responses(403, 404, 422, 500),
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "application/x-ndjson": {"schema": {"type": "string"}},
            }
        },
    },
)
def leaderboard(
    benchmark_id: str,
    engines: EnginesDep,
    principal: OptionalPrincipal,
    split: Literal["public", "private"] = "public",
    metric: Annotated[str | None, Query(max_length=64)] = None,
    rank_by: Literal["best", "latest"] = "best",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    format: Literal["json", "csv", "ndjson"] = "json",
) -> Response:
    """Ranked rows of the current answer-key version (withdrawn submissions hidden). ``format=csv`` has the columns
    ``rank,model,submission_id,submitted_at,answer_key_version`` then ``<m>,<m>_ci_low,<m>_ci_high`` per metric."""
    _check_split(split, principal)
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        raw = sub_repo.leaderboard_rows(conn, benchmark_id, loaded.benchmark.current_version, split)
    metric = metric or loaded.spec.primary_metric
    if metric not in loaded.spec.metrics:
        raise ApiError(
            422,
            f"unknown metric {metric!r}",
            errors=[{"loc": ["query", "metric"], "msg": f"one of {sorted(loaded.spec.metrics)}", "type": "enum"}],
        )
    ranked, keys = leaderboard_rows(loaded, raw, metric, rank_by)
    start = bisect.bisect_right(keys, _decode_rank_cursor(cursor)) if cursor else 0
    page = ranked[start : start + limit]
    more = start + limit < len(ranked)
    next_cursor = _encode_rank_cursor(keys[start + limit - 1]) if more else None
    headers = {"X-Next-Cursor": next_cursor} if next_cursor else {}
    if format == "csv":
        present = [m for m in loaded.spec.metrics if any(m in r["scores"] for r in ranked)]
        return Response(_csv(page, present), media_type="text/csv", headers=headers)
    if format == "ndjson":
        body = "".join(json.dumps(_row_json(r), sort_keys=True) + "\n" for r in page)
        return Response(body, media_type="application/x-ndjson", headers=headers)
    return JSONResponse(
        {
            "benchmark_id": benchmark_id,
            "split": split,
            "metric": metric,
            "higher_is_better": loaded.spec.metrics[metric].higher_is_better,
            "rank_by": rank_by,
            "answer_key_version": loaded.benchmark.current_version,
            "items": [_row_json(r) for r in page],
            "next_cursor": next_cursor,
        }
    )


@router.get("/{benchmark_id}/compare", response_model=CompareOut, responses=responses(403, 404, 422, 500))
def compare(
    benchmark_id: str,
    engines: EnginesDep,
    principal: OptionalPrincipal,
    a: Annotated[str, Query(max_length=64)],
    b: Annotated[str, Query(max_length=64)],
    split: Literal["public", "private"] = "public",
    n_resamples: Annotated[int, Query(ge=100, le=10_000)] = 2000,
    seed: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> dict[str, Any]:
    """Paired comparison of two submissions on their common items of the current version: exact McNemar when
    every per-item score is 0/1, else a seeded paired percentile bootstrap of the mean difference."""
    _check_split(split, principal)
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        per = {}
        for name, sid in (("a", a), ("b", b)):
            sub = sub_repo.get(conn, sid)
            scoring = sub_repo.latest_scoring(conn, sid, version) if sub and sub.benchmark_id == benchmark_id else None
            if scoring is None:
                raise ApiError(404, f"no scored submission {sid!r} in this benchmark", errors=None)
            per[name] = {item: v for _, item, v in sub_repo.item_scores(conn, scoring.id, [split])}
    common = sorted(per["a"].keys() & per["b"].keys())
    if not common:
        raise InvalidInput("the two submissions share no scored items in this split", ("b",))
    xa = np.array([per["a"][i] for i in common])
    xb = np.array([per["b"][i] for i in common])
    binary = bool(np.isin(xa, (0.0, 1.0)).all() and np.isin(xb, (0.0, 1.0)).all())
    result = mcnemar(xa, xb) if binary else paired_bootstrap(xa, xb, n_resamples, seed)
    return {
        "a": a,
        "b": b,
        "split": split,
        "n_common": len(common),
        "test": "mcnemar_exact" if binary else "paired_bootstrap",
        "mean_a": float(xa.mean()),
        "mean_b": float(xb.mean()),
        "result": result,
    }
