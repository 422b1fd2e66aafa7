"""Benchmarks: registration, immutable answer-key versions, scoring against a version, re-scoring, leaderboards
(one row per model, deterministic ranking, keyset cursors) and the paired comparison of two submissions."""

from __future__ import annotations

import bisect
import json
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ValidationError
from sqlalchemy import Connection

from db.repositories import benchmarks as bench_repo
from db.repositories import submissions as sub_repo
from db.repositories.benchmarks import BenchmarkRow, VersionRow
from db.repositories.jobs import JobRow
from db.repositories.submissions import ScoreRow
from service.errors import InvalidInput
from service.registry import SCORERS, Progress, ScorerSpec, no_progress
from service.scoring import raven
from service.stats import mcnemar, paired_bootstrap, wilcoxon_signed_rank
from usecases import arrays, cursors
from usecases.api_keys import Principal, require
from usecases.clock import utc_iso
from usecases.errors import Conflict, Forbidden, InvalidFields, NotFound, invalid
from usecases.estimator_runs import check_caps
from usecases.scoring import canonical_key, check_unique, item_metric, score_by_split, validate_items

if TYPE_CHECKING:
    from usecases.services import Services


@dataclass(frozen=True)
class Loaded:
    """A benchmark with its scorer and validated scorer params."""

    benchmark: BenchmarkRow
    spec: ScorerSpec
    params: Any


def load(conn: Connection, benchmark_id: str) -> Loaded:
    """The benchmark, its scorer and validated scorer params; ``NotFound`` when unknown."""
    row = bench_repo.get(conn, benchmark_id)
    if row is None:
        raise NotFound(f"no benchmark {benchmark_id!r}")
    spec = SCORERS[row.scorer]
    return Loaded(row, spec, spec.params_model.model_validate_json(row.scorer_params))


_KEY_CACHE: OrderedDict[tuple[str, int, str], list[Any]] = OrderedDict()
_KEY_CACHE_SIZE = 16


def key_items(conn: Connection, loaded: Loaded, version: int) -> list[Any]:
    """The validated items of an answer-key version. Versions are immutable, so validated items are kept in a
    small per-process LRU keyed on (benchmark, version, scorer version)."""
    cache_key = (loaded.benchmark.id, version, loaded.spec.version)
    if cache_key in _KEY_CACHE:
        _KEY_CACHE.move_to_end(cache_key)
        return _KEY_CACHE[cache_key]
    text = bench_repo.version_items(conn, loaded.benchmark.id, version)
    assert text is not None
    items = validate_items(loaded.spec.answer_key_item_model, json.loads(text), ("answer_key", "items"))
    _KEY_CACHE[cache_key] = items
    if len(_KEY_CACHE) > _KEY_CACHE_SIZE:
        _KEY_CACHE.popitem(last=False)
    return items


def submission_params(loaded: Loaded, metadata: dict[str, Any]) -> Any:
    """The benchmark's scorer params with the fields its scorer takes from a submission's metadata
    (``ScorerSpec.metadata_params``) set from ``metadata`` where present; an invalid value is a 422 naming it."""
    fields = {f: metadata[f] for f in loaded.spec.metadata_params if f in metadata}
    if not fields:
        return loaded.params
    try:
        return loaded.spec.params_model.model_validate({**loaded.params.model_dump(), **fields})
    except ValidationError as exc:
        errors = [
            {"loc": ["body", "metadata", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False, include_context=False, include_input=False)
        ]
        raise InvalidFields("metadata failed the scorer's params validation", errors) from exc


def score_and_store(
    conn: Connection, loaded: Loaded, submission_id: str, version: int, key: list[Any], preds: list[Any]
) -> dict[str, dict[str, Any]]:
    """Score ``preds`` per split against ``key`` (both with uploaded arrays resolved) with the params of the stored
    submission (``submission_params``) and store one new scoring with every metric's per-item values (in the
    caller's transaction)."""
    params = loaded.params
    if loaded.spec.metadata_params:
        sub = sub_repo.get(conn, submission_id)
        assert sub is not None
        params = submission_params(loaded, json.loads(sub.meta))
    outcomes, items = score_by_split(loaded.spec, key, preds, params)
    scores = [
        ScoreRow(split, metric, v["value"], v["ci_low"], v["ci_high"], v["n"])
        for split, outcome in outcomes.items()
        for metric, v in outcome["scores"].items()
    ]
    details = {split: {k: o[k] for k in ("breakdown", "coverage", "reconstructed")} for split, o in outcomes.items()}
    sub_repo.insert_scoring(
        conn,
        submission_id=submission_id,
        answer_key_version=version,
        scorer_version=loaded.spec.version,
        details=json.dumps(details, sort_keys=True, separators=(",", ":")),
        when=datetime.now(UTC),
        scores=scores,
        item_scores=items,
    )
    return outcomes


def rescore_all(services: Services, benchmark_id: str, progress: Progress = no_progress) -> int:
    """Add a new scoring of every stored submission against the current answer-key version; old rows stay.

    Predictions for items the current version no longer has are ignored.
    """
    with services.engines.write.begin() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = arrays.resolve_items(services.engines, key_items(conn, loaded, version), ("answer_key", "items"))
        subs = sub_repo.all_for_benchmark(conn, benchmark_id)
        known = {k.item_id for k in key}
        for i, sub in enumerate(subs):
            progress(i / max(len(subs), 1), f"submission {i + 1} of {len(subs)}")
            preds = validate_items(
                loaded.spec.prediction_item_model,
                json.loads(sub_repo.predictions(conn, sub.id)),
                ("predictions", "items"),
            )
            preds = arrays.resolve_items(
                services.engines, [p for p in preds if p.item_id in known], ("predictions", "items")
            )
            score_and_store(conn, loaded, sub.id, version, key, preds)
    return len(subs)


def run_rescore_job(services: Services, job: JobRow, progress: Progress) -> None:
    """The ``rescore`` job kind: re-score every submission of benchmark ``job.name`` against its current version."""
    rescore_all(services, job.name, progress)


# -- registration and answer keys --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkView:
    """A benchmark with the content hash of its current answer-key version (and, for one benchmark, every version)."""

    row: BenchmarkRow
    sha256: str
    primary_metric: str
    versions: list[VersionRow] | None = None


@dataclass(frozen=True)
class CheckedKey:
    """An answer key validated against its scorer, canonicalised and hashed, with its split sizes."""

    text: str
    sha256: str
    n_public: int
    n_private: int


def _checked_key(services: Services, spec: ScorerSpec, params: Any, items: list[dict[str, Any]]) -> CheckedKey:
    """Validate the items, resolve and check their uploaded arrays, and refuse a key whose scoring alone (every
    item unanswered) costs more than the scorer's hard cap; the canonical text keeps the references."""
    key = validate_items(spec.answer_key_item_model, items, ("answer_key", "items"))
    check_unique(key, ("answer_key", "items"))
    loc = ("answer_key", "items")
    resolved = arrays.resolve_items(services.engines, key, loc)
    check_caps(spec, float(spec.cost(resolved, [], params)), queue_available=True, loc=("body", *loc))
    text, sha = canonical_key(key)
    n_private = sum(1 for k in key if k.split == "private")
    return CheckedKey(text, sha, len(key) - n_private, n_private)


def _owner_or_admin(principal: Principal, row: BenchmarkRow) -> None:
    if not principal.is_admin and principal.key_id != row.owner_key_id:
        raise Forbidden("only the benchmark's owner or an admin may do this")


def create_benchmark(
    services: Services,
    principal: Principal,
    *,
    name: str,
    scorer: str,
    description: str,
    scorer_params: dict[str, Any],
    max_submissions_per_day: int,
    answer_key: list[dict[str, Any]],
) -> BenchmarkView:
    """Register a benchmark with its scorer, fixed scorer params and answer key (version 1). A daily quota of 0
    means the server default."""
    require(principal, "benchmarks:write")
    spec = SCORERS.get(scorer)
    if spec is None:
        raise InvalidInput(f"unknown scorer {scorer!r}; see GET /v1/scorers", ("scorer",))
    try:
        params = spec.params_model.model_validate(scorer_params)
    except ValidationError as exc:
        errors = [
            {"loc": ["body", "scorer_params", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()
        ]
        raise InvalidFields("scorer_params failed validation", errors) from exc
    key = _checked_key(services, spec, params, answer_key)
    now = datetime.now(UTC)
    row = BenchmarkRow(
        id=str(uuid.uuid4()),
        name=name,
        scorer=scorer,
        description=description,
        scorer_params=json.dumps(params.model_dump(mode="json"), sort_keys=True, separators=(",", ":")),
        max_submissions_per_day=max_submissions_per_day or services.settings.submissions_per_day,
        owner_key_id=principal.key_id,
        current_version=1,
        created_at=now,
    )
    with services.engines.write.begin() as conn:
        if not bench_repo.create(conn, row, VersionRow(1, key.sha256, key.n_public, key.n_private, now), key.text):
            raise Conflict(f"a benchmark named {name!r} exists")
    return BenchmarkView(row, key.sha256, spec.primary_metric)


def list_benchmarks(services: Services, limit: int, cursor: str | None) -> tuple[list[BenchmarkView], str | None]:
    """Benchmarks ordered by name and the cursor of the next page."""
    after = cursors.decode_str(cursor)
    with services.engines.read.connect() as conn:
        rows = bench_repo.list_all(conn, limit + 1, after)
        page = rows[:limit]
        shas = bench_repo.current_sha256(conn, [r.id for r in page])
    views = [BenchmarkView(r, shas[r.id], SCORERS[r.scorer].primary_metric) for r in page]
    return views, (cursors.encode(page[-1].name) if len(rows) > limit else None)


def get_benchmark(services: Services, benchmark_id: str) -> BenchmarkView:
    """One benchmark with every answer-key version (content hash and split sizes; never the items)."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        versions = bench_repo.versions(conn, benchmark_id)
    row = loaded.benchmark
    return BenchmarkView(row, versions[row.current_version - 1].sha256, loaded.spec.primary_metric, versions)


@dataclass(frozen=True)
class NewVersion:
    """Outcome of an answer-key upload: the version, whether it is new, and how the re-scoring runs."""

    version: int
    sha256: str
    created: bool
    rescored: int | None
    rescore_job: JobRow | None


def put_answer_key(
    services: Services, principal: Principal, benchmark_id: str, items: list[dict[str, Any]], client: str | None
) -> NewVersion:
    """Make ``items`` the current answer key: content identical to the current version changes nothing (that
    version is returned); any other content, an earlier version's included, becomes a new immutable version that
    is current, and every stored submission is re-scored against it: as a job when a queue runs, else inline."""
    require(principal, "benchmarks:write")
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
    _owner_or_admin(principal, loaded.benchmark)
    key = _checked_key(services, loaded.spec, loaded.params, items)
    with services.engines.write.begin() as conn:
        current = load(conn, benchmark_id).benchmark.current_version
        unchanged = bench_repo.current_sha256(conn, [benchmark_id]).get(benchmark_id) == key.sha256
        if not unchanged:
            added = bench_repo.add_version(
                conn, benchmark_id, key.sha256, key.text, key.n_public, key.n_private, datetime.now(UTC)
            )
    if unchanged:
        return NewVersion(current, key.sha256, False, 0, None)
    if services.jobs.available:
        job = services.jobs.submit(
            kind="rescore",
            name=benchmark_id,
            version="1",
            params_json=json.dumps({"answer_key_version": added.version}),
            api_key_id=principal.key_id,
            client=client,
        )
        return NewVersion(added.version, key.sha256, True, None, job)
    return NewVersion(added.version, key.sha256, True, rescore_all(services, benchmark_id), None)


def rescore(services: Services, principal: Principal, benchmark_id: str) -> tuple[int, int]:
    """Admin: a new scoring of every submission against the current version; returns (version, how many)."""
    require(principal, "admin")
    n = rescore_all(services, benchmark_id)
    with services.engines.read.connect() as conn:
        return load(conn, benchmark_id).benchmark.current_version, n


# -- leaderboards ------------------------------------------------------------------------------------------------


def check_split(split: str, principal: Principal | None) -> None:
    if split == "private" and (principal is None or not principal.is_admin):
        raise Forbidden("private-split scores are visible to admins only")


SortKey = tuple[float, float, str, str]


def _sort_key(row: dict[str, Any], metric: str, sign: float) -> SortKey:
    """Best first by metric value, then by ci_low, then the earlier submission, then the submission id."""
    s = row["scores"][metric]
    ci = sign * s["ci_low"] if s["ci_low"] is not None else float("inf")
    return (sign * s["value"], ci, utc_iso(row["submitted_at"]), row["submission_id"])


def _encode_rank_cursor(key: SortKey) -> str:
    """Keyset cursor of a leaderboard page: the sort key of its last row (a missing ci_low as null)."""
    value, ci, submitted_at, submission_id = key
    return cursors.encode([value, None if ci == float("inf") else ci, submitted_at, submission_id])


def _decode_rank_cursor(cursor: str) -> SortKey:
    key = cursors.decode(cursor)
    ok = (
        isinstance(key, list)
        and len(key) == 4
        and isinstance(key[0], int | float)
        and (key[1] is None or isinstance(key[1], int | float))
        and all(isinstance(k, str) for k in key[2:])
    )
    if not ok:
        raise cursors.invalid_cursor()
    return (float(key[0]), float("inf") if key[1] is None else float(key[1]), key[2], key[3])


def rank_submissions(
    rows: list[dict[str, Any]], metric: str, higher_is_better: bool, rank_by: str
) -> tuple[list[dict[str, Any]], list[SortKey]]:
    """One row per model (its best or latest submission), best first with deterministic ties. Returns the rows
    with their ``rank`` and their sort keys (ascending: the keyset for cursors)."""
    sign = -1.0 if higher_is_better else 1.0
    chosen: dict[str, dict[str, Any]] = {}
    for r in rows:
        if metric not in r["scores"]:
            continue
        cur = chosen.get(r["model"])
        if cur is None:
            chosen[r["model"]] = r
        elif rank_by == "latest":
            if (utc_iso(r["submitted_at"]), r["submission_id"]) > (utc_iso(cur["submitted_at"]), cur["submission_id"]):
                chosen[r["model"]] = r
        elif _sort_key(r, metric, sign) < _sort_key(cur, metric, sign):
            chosen[r["model"]] = r
    ordered = sorted(chosen.values(), key=lambda r: _sort_key(r, metric, sign))
    return [{"rank": i + 1, **r} for i, r in enumerate(ordered)], [_sort_key(r, metric, sign) for r in ordered]


@dataclass(frozen=True)
class LeaderboardPage:
    benchmark_id: str
    split: str
    metric: str
    higher_is_better: bool
    rank_by: str
    answer_key_version: int
    rows: list[dict[str, Any]]
    metrics_present: list[str]
    next_cursor: str | None


def leaderboard(
    services: Services,
    principal: Principal | None,
    benchmark_id: str,
    *,
    split: str,
    metric: str | None,
    rank_by: str,
    limit: int,
    cursor: str | None,
) -> LeaderboardPage:
    """A page of the ranked leaderboard of the current answer-key version (withdrawn submissions hidden). Until the
    re-scoring after a new version has reached a submission, its row keeps its previous version's scores and is
    marked ``pending`` (with that ``answer_key_version``)."""
    check_split(split, principal)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        scored = sub_repo.latest_scores(conn, benchmark_id, version, split)
    spec = loaded.spec
    metric = metric or spec.primary_metric
    if metric not in spec.metrics:
        raise invalid(f"unknown metric {metric!r}", ("query", "metric"), "enum", f"one of {sorted(spec.metrics)}")
    higher = spec.metrics[metric].higher_is_better
    ranked, keys = rank_submissions(scored, metric, higher, rank_by)
    start = bisect.bisect_right(keys, _decode_rank_cursor(cursor)) if cursor else 0
    page = [{**r, "pending": r["answer_key_version"] != version} for r in ranked[start : start + limit]]
    more = start + limit < len(ranked)
    return LeaderboardPage(
        benchmark_id=benchmark_id,
        split=split,
        metric=metric,
        higher_is_better=higher,
        rank_by=rank_by,
        answer_key_version=version,
        rows=page,
        metrics_present=[m for m in spec.metrics if any(m in r["scores"] for r in ranked)],
        next_cursor=_encode_rank_cursor(keys[start + limit - 1]) if more else None,
    )


# -- paired comparison -------------------------------------------------------------------------------------------


class Comparison(BaseModel):
    a: str
    b: str
    split: str
    metric: str
    n_common: int
    test: str
    mean_a: float
    mean_b: float
    result: dict[str, Any]


def compare(
    services: Services,
    principal: Principal | None,
    benchmark_id: str,
    a: str,
    b: str,
    *,
    split: str,
    metric: str | None,
    n_resamples: int,
    seed: int,
) -> Comparison:
    """Paired comparison of two submissions on the per-item values of ``metric`` (default the primary) for their
    common items of the current version: exact McNemar when every value is 0/1, else the scorer's declared test
    for the metric (Wilcoxon signed-rank, or a seeded paired percentile bootstrap of the mean difference)."""
    check_split(split, principal)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        chosen = item_metric(loaded.spec, metric)
        version = loaded.benchmark.current_version
        per = {}
        for name, sid in (("a", a), ("b", b)):
            sub = sub_repo.get(conn, sid)
            scoring = sub_repo.latest_scoring(conn, sid, version) if sub and sub.benchmark_id == benchmark_id else None
            if scoring is None:
                raise NotFound(f"no scored submission {sid!r} in this benchmark")
            per[name] = {item: v for _, item, v in sub_repo.item_scores(conn, scoring.id, [split], chosen)}
    common = sorted(per["a"].keys() & per["b"].keys())
    if not common:
        raise InvalidInput(f"the two submissions share no items with {chosen} values in this split", ("b",))
    xa = np.array([per["a"][i] for i in common])
    xb = np.array([per["b"][i] for i in common])
    declared = loaded.spec.paired_tests[chosen]
    if np.isin(xa, (0.0, 1.0)).all() and np.isin(xb, (0.0, 1.0)).all():
        test, result = "mcnemar_exact", mcnemar(xa, xb)
    elif declared == "wilcoxon":
        test, result = "wilcoxon_signed_rank", wilcoxon_signed_rank(xa, xb)
    else:
        test, result = "paired_bootstrap", paired_bootstrap(xa, xb, n_resamples, seed)
    return Comparison(
        a=a,
        b=b,
        split=split,
        metric=chosen,
        n_common=len(common),
        test=test,
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        result=result,
    )


# -- RAVEN-Bench cross-modal gain --------------------------------------------------------------------------------

MAX_CROSS_MODAL = 3


def raven_cross_modal(
    services: Services, principal: Principal | None, benchmark_id: str, submission_ids: list[str], *, split: str
) -> dict[str, Any]:
    """RAVEN-Bench's cross-modal gain and modality reliance (``service.scoring.raven.cross_modal``) of up to three
    submissions of one model, one per input setting (each submission's ``metadata.setting``), from their latest
    scorings against the current answer-key version."""
    check_split(split, principal)
    ids = [s for s in submission_ids if s]
    if not 1 <= len(ids) <= MAX_CROSS_MODAL or len(set(ids)) < len(ids):
        raise invalid(
            "give one to three distinct submission ids", ("query", "submissions"), "value_error", "1-3 distinct ids"
        )
    by_setting: dict[str, dict[str, Any]] = {}
    chosen: dict[str, str] = {}
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        if loaded.spec.name != raven.SPEC.name:
            raise invalid(
                f"benchmark {benchmark_id!r} is scored by {loaded.spec.name}, not raven",
                ("path", "benchmark_id"),
                "scorer",
            )
        version = loaded.benchmark.current_version
        for sid in ids:
            sub = sub_repo.get(conn, sid)
            scoring = sub_repo.latest_scoring(conn, sid, version) if sub and sub.benchmark_id == benchmark_id else None
            if scoring is None:
                raise NotFound(f"no scored submission {sid!r} in this benchmark")
            details = json.loads(scoring.details).get(split)
            if details is None:
                raise invalid(f"submission {sid!r} has no {split} items", ("query", "submissions"), "value_error")
            setting = details["breakdown"]["setting"]
            if setting in chosen:
                raise invalid(
                    f"submissions {chosen[setting]!r} and {sid!r} are both {setting}",
                    ("query", "submissions"),
                    "value_error",
                )
            scores = {s.metric: s.__dict__ for s in sub_repo.scores(conn, scoring.id, [split])}
            by_setting[setting] = {"scores": scores, "breakdown": details["breakdown"]}
            chosen[setting] = sid
    return {
        "benchmark_id": benchmark_id,
        "split": split,
        "answer_key_version": version,
        "submissions": chosen,
        **raven.cross_modal(by_setting),
    }
