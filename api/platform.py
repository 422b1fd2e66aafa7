"""Benchmark platform operations shared by the benchmark and submission routes: loading a benchmark's scorer,
answer key and params, scoring a submission against a version and storing the scoring."""

import json
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from api.problems import ApiError
from api.scoring import score_by_split, validate_items
from db.engine import Engines
from db.repositories import benchmarks as bench_repo
from db.repositories import submissions as sub_repo
from db.repositories.benchmarks import BenchmarkRow
from db.repositories.submissions import ScoreRow
from service.registry import SCORERS, Progress, ScorerSpec, no_progress


@dataclass(frozen=True)
class Loaded:
    benchmark: BenchmarkRow
    spec: ScorerSpec
    params: Any


def load(conn: Connection, benchmark_id: str) -> Loaded:
    """The benchmark, its scorer and validated scorer params; 404 when unknown."""
    row = bench_repo.get(conn, benchmark_id)
    if row is None:
        raise ApiError(404, f"no benchmark {benchmark_id!r}")
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


def score_and_store(
    conn: Connection, loaded: Loaded, submission_id: str, version: int, key: list[Any], preds: list[Any]
) -> dict[str, dict[str, Any]]:
    """Score ``preds`` per split against ``key`` and store one new scoring (in the caller's transaction)."""
    outcomes, items = score_by_split(loaded.spec, key, preds, loaded.params)
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


def rescore_all(engines: Engines, benchmark_id: str, progress: Progress = no_progress) -> int:
    """Add a new scoring of every stored submission against the current answer-key version; old rows stay.

    Predictions for items the current version no longer has are ignored.
    """
    with engines.write.begin() as conn:
        loaded = load(conn, benchmark_id)
        version = loaded.benchmark.current_version
        key = key_items(conn, loaded, version)
        subs = sub_repo.all_for_benchmark(conn, benchmark_id)
        known = {k.item_id for k in key}
        for i, sub in enumerate(subs):
            progress(i / max(len(subs), 1), f"submission {i + 1} of {len(subs)}")
            preds = validate_items(
                loaded.spec.prediction_item_model,
                json.loads(sub_repo.predictions(conn, sub.id)),
                ("predictions", "items"),
            )
            preds = [p for p in preds if p.item_id in known]
            score_and_store(conn, loaded, sub.id, version, key, preds)
    return len(subs)
