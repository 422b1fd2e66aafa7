"""Benchmarks: registration, immutable answer-key versions, scoring against a version, re-scoring, leaderboards
(one row per model, deterministic ranking, keyset cursors) and the paired comparison of two submissions."""

from __future__ import annotations

import json
import math
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ValidationError
from sqlalchemy import Connection

from db.repositories import benchmarks as bench_repo
from db.repositories import participants as part_repo
from db.repositories import rankings as rank_repo
from db.repositories import submissions as sub_repo
from db.repositories.benchmarks import BenchmarkRow, VersionRow
from db.repositories.jobs import JobRow
from db.repositories.rankings import Board, RankedRow
from db.repositories.submissions import ScoreRow, ScoringRow, SplitItems
from service.errors import InvalidInput
from service.registry import SCORERS, Progress, ScorerSpec, no_progress
from service.scoring import raven
from service.stats import mcnemar, paired_bootstrap, wilcoxon_signed_rank
from usecases import arrays, audit, cursors, rankings
from usecases.access import Access, access, check_split, on_public_board, require_owner, sees_submission
from usecases.api_keys import Principal, require
from usecases.budgets import check_caps, sync_slot
from usecases.clock import utc_iso
from usecases.errors import Conflict, InvalidFields, NotFound, invalid
from usecases.scoring import (
    SPLITS,
    by_item_id,
    canonical_key,
    check_unique,
    item_metric,
    score_by_split,
    validate_items,
)

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


@dataclass(frozen=True)
class Scored:
    """One scoring computed in memory: the outcome per split, its score rows, per-item values and details."""

    outcomes: dict[str, dict[str, Any]]
    scores: list[ScoreRow]
    items: list[SplitItems]
    details: str


def score_submission(loaded: Loaded, meta: dict[str, Any], key: list[Any], preds: list[Any]) -> Scored:
    """Score ``preds`` per split against ``key`` (both with uploaded arrays resolved) with the params of a
    submission whose metadata is ``meta`` (``submission_params``); nothing is stored."""
    params = submission_params(loaded, meta) if loaded.spec.metadata_params else loaded.params
    outcomes, items = score_by_split(loaded.spec, key, preds, params)
    scores = [
        ScoreRow(split, metric, v["value"], v["ci_low"], v["ci_high"], v["n"])
        for split, outcome in outcomes.items()
        for metric, v in outcome["scores"].items()
    ]
    details = {split: {k: o[k] for k in ("breakdown", "coverage", "reconstructed")} for split, o in outcomes.items()}
    return Scored(outcomes, scores, items, json.dumps(details, sort_keys=True, separators=(",", ":")))


def store_scoring(conn: Connection, loaded: Loaded, submission_id: str, version: int, scored: Scored) -> None:
    """Store one new scoring of a submission against answer-key ``version`` and bring its model's leaderboard rows
    up to date (``rankings.refresh``), in the caller's transaction."""
    sub_repo.insert_scoring(
        conn,
        submission_id=submission_id,
        answer_key_version=version,
        scorer_version=loaded.spec.version,
        details=scored.details,
        when=datetime.now(UTC),
        scores=scored.scores,
        items=scored.items,
    )
    rankings.refresh(conn, loaded.benchmark.id, submission_id, loaded.spec.metrics)


def rescore_all(services: Services, benchmark_id: str, progress: Progress = no_progress) -> int:
    """Add a new scoring of every stored submission against the current answer-key version; old rows stay. Each
    submission is scored in memory under one of the process's concurrency slots (waiting for one: this runs
    inside a job), then stored in a short transaction of its own, so writes are never held up for the whole run.

    Predictions for items the current version no longer has are ignored.
    """
    engines = services.engines
    with engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = arrays.resolve_items(engines, key_items(conn, loaded, version), arrays.STORED, ("answer_key", "items"))
        subs = sub_repo.all_for_benchmark(conn, benchmark_id)
    known = {k.item_id for k in key}
    for i, sub in enumerate(subs):
        progress(i / max(len(subs), 1), f"submission {i + 1} of {len(subs)}")
        with engines.read.connect() as conn:
            raw = json.loads(sub_repo.predictions(conn, sub.id))
        preds = validate_items(loaded.spec.prediction_item_model, raw, ("predictions", "items"))
        preds = arrays.resolve_items(
            engines, [p for p in preds if p.item_id in known], arrays.STORED, ("predictions", "items")
        )
        with sync_slot(services, large=True, wait=True):
            scored = score_submission(loaded, json.loads(sub.meta), key, preds)
        with engines.write.begin() as conn:
            store_scoring(conn, loaded, sub.id, version, scored)
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


def _check_scorable(spec: ScorerSpec, params: Any, key: list[Any]) -> None:
    """The scorer's ``check_key`` on each split's items in item_id order, as every scoring sees them, so that a key
    it accepts can be scored: an item's problem names the item's position in ``key`` (the submitted list), a whole
    split's problem says which split it is."""
    if spec.check_key is None:
        return
    position = {k.item_id: i for i, k in enumerate(key)}
    for split in SPLITS:
        items = by_item_id([k for k in key if k.split == split])
        if not items:
            continue
        try:
            spec.check_key(items, params)
        except InvalidInput as exc:
            loc = exc.loc
            if loc[:2] == ("answer_key", "items") and len(loc) > 2:
                raise InvalidInput(exc.msg, (*loc[:2], position[items[loc[2]].item_id], *loc[3:])) from exc
            if loc == ("answer_key", "items"):
                raise InvalidInput(f"{split} split: {exc.msg}", loc) from exc
            raise


def _checked_key(
    services: Services, api_key_id: str, spec: ScorerSpec, params: Any, items: list[dict[str, Any]]
) -> CheckedKey:
    """Validate the items, refuse a key whose scoring alone (every item unanswered) costs more than the scorer's
    hard cap (costed from the uploaded arrays' stored shapes, before any is loaded), then check the arrays (those
    ``api_key_id`` may use: ``arrays.STORED`` for a stored version's) and run the scorer's checks of the key
    (``_check_scorable``); the canonical text keeps the references."""
    key = validate_items(spec.answer_key_item_model, items, ("answer_key", "items"))
    check_unique(key, ("answer_key", "items"))
    loc = ("answer_key", "items")
    shaped = arrays.resolve_items(services.engines, key, api_key_id, loc, shapes_only=True)
    check_caps(spec, float(spec.cost(shaped, [], params)), queue_available=True, loc=("body", *loc))
    _check_scorable(spec, params, arrays.resolve_items(services.engines, key, api_key_id, loc))
    text, sha = canonical_key(key)
    n_private = sum(1 for k in key if k.split == "private")
    return CheckedKey(text, sha, len(key) - n_private, n_private)


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
    key = _checked_key(services, principal.key_id, spec, params, answer_key)
    now = services.clock()
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
        audit.record(conn, row.id, "benchmark.created", principal, "1", name=name, answer_key_sha256=key.sha256)
    return BenchmarkView(row, key.sha256, spec.primary_metric)


def list_benchmarks(services: Services, limit: int, cursor: str | None) -> cursors.Page[BenchmarkView]:
    """A page of benchmarks ordered by name."""
    after = cursors.decode_str(cursor)
    with services.engines.read.connect() as conn:
        page = cursors.keyset_page(lambda n: bench_repo.list_all(conn, n, after), limit, key=lambda r: r.name)
        shas = bench_repo.current_sha256(conn, [r.id for r in page.items])
    views = [BenchmarkView(r, shas[r.id], SCORERS[r.scorer].primary_metric) for r in page.items]
    return cursors.Page(views, page.next_cursor)


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
        require_owner(access(conn, loaded.benchmark, principal), "a new answer key")
    key = _checked_key(services, principal.key_id, loaded.spec, loaded.params, items)
    return _make_current(services, principal, benchmark_id, key, client, "answer_key.put", {})


def restore_answer_key(
    services: Services, principal: Principal, benchmark_id: str, version: int, client: str | None
) -> NewVersion:
    """Make version ``version``'s items the current answer key exactly as ``put_answer_key`` of those items does
    (the same checks, a new version re-scored, nothing changed when they are the current content), audited as
    ``answer_key.restored``; ``NotFound`` for a version the benchmark does not have."""
    require(principal, "benchmarks:write")
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "a new answer key")
        found = bench_repo.get_version(conn, benchmark_id, version)
    if found is None:
        raise NotFound(f"benchmark {benchmark_id!r} has no answer-key version {version}")
    key = _checked_key(services, arrays.STORED, loaded.spec, loaded.params, json.loads(found[1]))
    return _make_current(
        services, principal, benchmark_id, key, client, "answer_key.restored", {"restored_version": version}
    )


def _make_current(
    services: Services,
    principal: Principal,
    benchmark_id: str,
    key: CheckedKey,
    client: str | None,
    action: str,
    details: dict[str, Any],
) -> NewVersion:
    """Store ``key`` as a new current version (audited as ``action`` with ``details``) and re-score every submission
    against it, unless it is the current content (nothing changes, no audit entry)."""
    with services.engines.write.begin() as conn:
        current = load(conn, benchmark_id).benchmark.current_version
        unchanged = bench_repo.current_sha256(conn, [benchmark_id]).get(benchmark_id) == key.sha256
        if not unchanged:
            added = bench_repo.add_version(
                conn, benchmark_id, key.sha256, key.text, key.n_public, key.n_private, services.clock()
            )
            rescoring = "job" if services.jobs.available else "inline"
            audit.record(
                conn,
                benchmark_id,
                action,
                principal,
                str(added.version),
                sha256=key.sha256,
                n_public=key.n_public,
                n_private=key.n_private,
                rescore=rescoring,
                **details,
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


@dataclass(frozen=True)
class VersionView:
    """An answer-key version as its owners list it: whether it is current, and (one version) its items."""

    row: VersionRow
    current: bool
    items: list[dict[str, Any]] | None = None


def answer_key_versions(
    services: Services, principal: Principal | None, benchmark_id: str, limit: int, cursor: str | None
) -> cursors.Page[VersionView]:
    """A page of the benchmark's answer-key versions, newest first (owners and admins)."""
    before = cursors.decode_seq(cursor)
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "the answer-key versions")
        page = cursors.keyset_page(
            lambda n: bench_repo.versions_page(conn, benchmark_id, n, before), limit, key=lambda r: r.version
        )
    current = loaded.benchmark.current_version
    return cursors.Page([VersionView(r, r.version == current) for r in page.items], page.next_cursor)


def answer_key_version(services: Services, principal: Principal | None, benchmark_id: str, version: int) -> VersionView:
    """One answer-key version with its items, both splits' (owners and admins); ``NotFound`` for an unknown one."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        require_owner(access(conn, loaded.benchmark, principal), "an answer-key version's items")
        found = bench_repo.get_version(conn, benchmark_id, version)
    if found is None:
        raise NotFound(f"benchmark {benchmark_id!r} has no answer-key version {version}")
    row, text = found
    return VersionView(row, row.version == loaded.benchmark.current_version, json.loads(text))


def rescore(services: Services, principal: Principal, benchmark_id: str) -> tuple[int, int]:
    """Admin: a new scoring of every submission against the current version; returns (version, how many). The audit
    entry is written when it starts, in a transaction of its own (the re-scoring is one transaction per
    submission)."""
    require(principal, "admin")
    with services.engines.write.begin() as conn:
        version = load(conn, benchmark_id).benchmark.current_version
        audit.record(conn, benchmark_id, "rescore", principal, str(version))
    n = rescore_all(services, benchmark_id)
    with services.engines.read.connect() as conn:
        return load(conn, benchmark_id).benchmark.current_version, n


# -- leaderboards ------------------------------------------------------------------------------------------------


SortKey = rank_repo.SortKey


def _encode_rank_cursor(key: SortKey) -> str:
    """Keyset cursor of a leaderboard page: the sort key of its last row as [value, ci_low or null, submitted_at,
    submission_id] (value and ci_low signed so that ascending is best first)."""
    value, ci_missing, ci, submitted_at, submission_id = key
    return cursors.encode([value, None if ci_missing else ci, utc_iso(submitted_at), submission_id])


def _decode_rank_cursor(cursor: str) -> SortKey:
    key = cursors.decode(cursor)
    ok = (
        isinstance(key, list)
        and len(key) == 4
        and isinstance(key[0], int | float)
        and not isinstance(key[0], bool)
        and (key[1] is None or (isinstance(key[1], int | float) and not isinstance(key[1], bool)))
        and all(isinstance(k, str) for k in key[2:])
        and all(math.isfinite(k) for k in key[:2] if k is not None)
    )
    if not ok:
        raise cursors.invalid_cursor()
    try:
        submitted_at = datetime.strptime(key[2], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        raise cursors.invalid_cursor() from None
    return (float(key[0]), key[1] is None, 0.0 if key[1] is None else float(key[1]), submitted_at, key[3])


def _row(r: RankedRow, version: int, shown_as: dict[str, str]) -> dict[str, Any]:
    return {
        "rank": r.rank,
        "baseline": bool(r.row.baseline),
        "participant": shown_as.get(r.row.api_key_id or ""),
        "submission_id": r.row.submission_id,
        "model": r.row.model,
        "submitted_at": r.row.submitted_at,
        "answer_key_version": r.row.answer_key_version,
        "scores": r.scores,
        "pending": r.row.answer_key_version != version,
    }


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


def _board(loaded: Loaded, split: str, metric: str | None, rank_by: str) -> Board:
    """The board asked for; an unknown metric is a 422 naming it."""
    spec = loaded.spec
    metric = metric or spec.primary_metric
    if metric not in spec.metrics:
        raise invalid(f"unknown metric {metric!r}", ("query", "metric"), "enum", f"one of {sorted(spec.metrics)}")
    return Board(loaded.benchmark.id, split, metric, rank_by)


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
    """A page of the ranked leaderboard of the current answer-key version (withdrawn submissions hidden), read from
    the maintained board (``usecases.rankings``): one row per model (its best or latest submission), best first
    by value, then ci_low (missing last), then the earlier submission, then the submission id. Until the
    re-scoring after a new version has reached a submission, its row keeps its previous version's scores and is
    marked ``pending`` (with that ``answer_key_version``). A baseline's row is listed in order with ``rank`` None and
    takes no rank from the others; a participant's row names its team or display name. The private split is for
    the benchmark's owners and admins."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        check_split(access(conn, loaded.benchmark, principal), split)
        version = loaded.benchmark.current_version
        board = _board(loaded, split, metric, rank_by)
        after = _decode_rank_cursor(cursor) if cursor else None
        ranked = rank_repo.page(conn, board, after, limit + 1)
        present = rank_repo.metrics_present(conn, board, list(loaded.spec.metrics))
        shown_as = part_repo.shown_as(conn, [r.row.api_key_id for r in ranked[:limit]])
    more = len(ranked) > limit
    return LeaderboardPage(
        benchmark_id=benchmark_id,
        split=split,
        metric=board.metric,
        higher_is_better=loaded.spec.metrics[board.metric].higher_is_better,
        rank_by=rank_by,
        answer_key_version=version,
        rows=[_row(r, version, shown_as) for r in ranked[:limit]],
        metrics_present=present,
        next_cursor=_encode_rank_cursor(ranked[limit - 1].row.key()) if more else None,
    )


def own_row(
    services: Services, principal: Principal, benchmark_id: str, *, split: str, metric: str | None, rank_by: str
) -> dict[str, Any] | None:
    """The caller's best-ranked row on the leaderboard (a row whose submission was made with the caller's key; a
    baseline has no rank), as ``leaderboard`` shows it, with its rank; None when the caller has none."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        check_split(access(conn, loaded.benchmark, principal), split)
        found = rank_repo.best_of_key(conn, _board(loaded, split, metric, rank_by), principal.key_id)
        shown_as = part_repo.shown_as(conn, [found.row.api_key_id] if found else [])
    return None if found is None else _row(found, loaded.benchmark.current_version, shown_as)


def board_size(services: Services, benchmark_id: str, *, split: str, metric: str | None, rank_by: str) -> int:
    """How many rows a leaderboard has, whoever may see them (the page says so where it cannot show them)."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        return rank_repo.size(conn, _board(loaded, split, metric, rank_by))


def _visible_scoring(
    conn: Connection, found: Access, principal: Principal | None, benchmark_id: str, sid: str, version: int
) -> ScoringRow:
    """The latest scoring against ``version`` of a submission of this benchmark that the caller may compare: one on
    the public board (not in a hidden phase before its board is frozen), or its own, or any for owners and admins;
    else ``NotFound`` (as if it did not exist)."""
    sub = sub_repo.get(conn, sid)
    visible = (
        sub is not None
        and sub.benchmark_id == benchmark_id
        and (
            sees_submission(found, principal, sub)
            or (on_public_board(sub) and not rank_repo.in_hidden_phase(conn, benchmark_id, sub.phase_id))
        )
    )
    scoring = sub_repo.latest_scoring(conn, sid, version) if visible else None
    if scoring is None:
        raise NotFound(f"no scored submission {sid!r} in this benchmark")
    return scoring


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
    for the metric (Wilcoxon signed-rank, or a seeded paired percentile bootstrap of the mean difference). Each
    submission must be on the public board, or the caller's own; owners and admins compare any, on either split."""
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        found = access(conn, loaded.benchmark, principal)
        check_split(found, split)
        chosen = item_metric(loaded.spec, metric)
        version = loaded.benchmark.current_version
        per = []
        for sid in (a, b):
            scoring = _visible_scoring(conn, found, principal, benchmark_id, sid, version)
            got = sub_repo.item_values(conn, scoring.id, [split], chosen, with_ids=False)
            per.append(got[0].values[chosen] if got else np.empty(0))
    # both scorings are against ``version``: their arrays align to its item order (item_id order)
    common = ~np.isnan(per[0]) & ~np.isnan(per[1]) if per[0].size == per[1].size else np.zeros(0, bool)
    if not common.any():
        raise InvalidInput(f"the two submissions share no items with {chosen} values in this split", ("b",))
    xa, xb = per[0][common], per[1][common]
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
        n_common=int(xa.size),
        test=test,
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        result=result,
    )


# -- RAVEN-Bench cross-modal gain --------------------------------------------------------------------------------

MAX_CROSS_MODAL = 3


@dataclass(frozen=True)
class CrossModalGain:
    """RAVEN-Bench's cross-modal gain of one model's submissions against ``answer_key_version``: the fields after
    ``submissions`` (setting -> submission id) are ``service.scoring.raven.cross_modal``'s."""

    benchmark_id: str
    split: str
    answer_key_version: int
    submissions: dict[str, str]
    s_main: dict[str, float]
    g_cm: float | None
    reliance_eo: float | None
    reliance_ir: float | None
    modality_matrix: dict[str, dict[str, float | None]]
    without_required_modality: dict[str, float | None]
    missing_settings: list[str]
    reconstructed: list[str]


def raven_cross_modal(
    services: Services, principal: Principal | None, benchmark_id: str, submission_ids: list[str], *, split: str
) -> CrossModalGain:
    """RAVEN-Bench's cross-modal gain and modality reliance (``service.scoring.raven.cross_modal``) of up to three
    submissions of one model, one per input setting (each submission's ``metadata.setting``), from their latest
    scorings against the current answer-key version (submissions visible to the caller as for ``compare``)."""
    ids = [s for s in submission_ids if s]
    if not 1 <= len(ids) <= MAX_CROSS_MODAL or len(set(ids)) < len(ids):
        raise invalid(
            "give one to three distinct submission ids", ("query", "submissions"), "value_error", "1-3 distinct ids"
        )
    by_setting: dict[str, dict[str, Any]] = {}
    chosen: dict[str, str] = {}
    with services.engines.read.connect() as conn:
        loaded = load(conn, benchmark_id)
        found = access(conn, loaded.benchmark, principal)
        check_split(found, split)
        if loaded.spec.name != raven.SPEC.name:
            raise invalid(
                f"benchmark {benchmark_id!r} is scored by {loaded.spec.name}, not raven",
                ("path", "benchmark_id"),
                "scorer",
            )
        version = loaded.benchmark.current_version
        for sid in ids:
            scoring = _visible_scoring(conn, found, principal, benchmark_id, sid, version)
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
    return CrossModalGain(
        benchmark_id=benchmark_id,
        split=split,
        answer_key_version=version,
        submissions=chosen,
        **raven.cross_modal(by_setting),
    )
